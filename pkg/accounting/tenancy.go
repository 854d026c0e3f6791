package accounting

import (
	"fmt"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

// selectors keeps each queue's namespaceSelector parsed, per queue object and generation, so that
// the scheduler's PreEnqueue reads a parsed selector instead of parsing one per pod.
type selectors struct {
	mu     sync.Mutex
	parsed map[string]parsedSelector
}

type parsedSelector struct {
	uid        types.UID
	generation int64
	selector   labels.Selector
	err        error
}

// of returns q's parsed selector: labels.Nothing for none, labels.Everything for {}.
func (s *selectors) of(q *schedulingv1beta1.Queue) (labels.Selector, error) {
	if q.UID == "" {
		return metav1.LabelSelectorAsSelector(q.Spec.NamespaceSelector)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.parsed[q.Name]; ok && p.uid == q.UID && p.generation == q.Generation {
		return p.selector, p.err
	}
	if s.parsed == nil {
		s.parsed = map[string]parsedSelector{}
	}
	sel, err := metav1.LabelSelectorAsSelector(q.Spec.NamespaceSelector)
	s.parsed[q.Name] = parsedSelector{uid: q.UID, generation: q.Generation, selector: sel, err: err}
	return sel, err
}

// watch forgets the selector of a deleted queue.
func (s *selectors) watch(queues cache.SharedIndexInformer) error {
	_, err := queues.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: func(obj any) {
		if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tombstone.Obj
		}
		if q, ok := obj.(*schedulingv1beta1.Queue); ok {
			s.mu.Lock()
			defer s.mu.Unlock()
			delete(s.parsed, q.Name)
		}
	}})
	return err
}

// SelectorRefusal says why queue q does not take work from a namespace with the given labels, or ""
// when its namespaceSelector selects the namespace.
func (s *Store) SelectorRefusal(q *schedulingv1beta1.Queue, namespace string, nsLabels map[string]string) string {
	sel, err := s.selectors.of(q)
	switch {
	case err != nil:
		return fmt.Sprintf("queue %q accepts no work: its spec.namespaceSelector is invalid: %v", q.Name, err)
	case sel.Matches(labels.Set(nsLabels)):
		return ""
	}
	return fmt.Sprintf("queue %q does not accept work from namespace %q: %s", q.Name, namespace, describeRefusal(q.Spec.NamespaceSelector))
}

// NamespaceRefusal is SelectorRefusal with the namespace's labels from the cache; a namespace the
// cache does not hold reads as one without labels.
func (s *Store) NamespaceRefusal(q *schedulingv1beta1.Queue, namespace string) string {
	var nsLabels map[string]string
	if ns, err := s.namespaces.Get(namespace); err == nil {
		nsLabels = ns.Labels
	}
	return s.SelectorRefusal(q, namespace, nsLabels)
}

// describeRefusal says why a selector that did not select a namespace's labels refused it.
func describeRefusal(sel *metav1.LabelSelector) string {
	if sel == nil {
		return "it has no spec.namespaceSelector, so it accepts no namespace's work"
	}
	return fmt.Sprintf("its spec.namespaceSelector %q does not select the namespace's labels", metav1.FormatLabelSelector(sel))
}
