package webhook

import (
	"context"
	"maps"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/rules"
)

// liveLookupTimeout bounds the reads from the API server behind one admission decision.
const liveLookupTimeout = 5 * time.Second

// judge runs a rule on the shared caches, the fast path, and confirms a refusal on a snapshot read
// from the API server: the caches lag behind the API, and no request is refused, nor a refusal
// worded, on their word alone (a queue created a moment ago, a child deleted a moment ago, a state
// that changed).
func (s *Server) judge(ctx context.Context, rule func(rules.View) field.ErrorList) (field.ErrorList, error) {
	if errs := rule(s.acct.Rules()); len(errs) == 0 {
		return nil, nil
	}
	live, err := s.live(ctx)
	if err != nil {
		return nil, err
	}
	return rule(live), nil
}

// liveView is the queue tree as the API server holds it at one moment, with the namespaces and the
// pods a rule asks about read as it asks. The work in PodGroups and QueueUnits comes from the caches.
type liveView struct {
	ctx        context.Context
	s          *Server
	queues     map[string]*schedulingv1beta1.Queue
	namespaces map[string]*v1.Namespace
}

// live reads every queue from the API server.
func (s *Server) live(ctx context.Context) (*liveView, error) {
	ctx, cancel := context.WithTimeout(ctx, liveLookupTimeout)
	defer cancel()
	list, err := s.acct.Client.SchedulingV1beta1().Queues().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	v := &liveView{ctx: context.WithoutCancel(ctx), s: s, queues: make(map[string]*schedulingv1beta1.Queue, len(list.Items)),
		namespaces: map[string]*v1.Namespace{}}
	for i := range list.Items {
		v.queues[list.Items[i].Name] = &list.Items[i]
	}
	return v, nil
}

func (v *liveView) Queue(name string) (*schedulingv1beta1.Queue, bool) {
	q, ok := v.queues[name]
	return q, ok
}

func (v *liveView) QueueNames() []string { return slices.Collect(maps.Keys(v.queues)) }

func (v *liveView) Children(name string) []*schedulingv1beta1.Queue {
	var out []*schedulingv1beta1.Queue
	for _, q := range v.queues {
		if q.Spec.Parent == name {
			out = append(out, q)
		}
	}
	return out
}

// HoldsWork adds to the caches' word the pods the API server holds with the queue's label, which
// admission writes on every pod of queue-scheduler.
func (v *liveView) HoldsWork(queue string) bool {
	if v.s.acct.HoldsWork(queue) {
		return true
	}
	ctx, cancel := context.WithTimeout(v.ctx, liveLookupTimeout)
	defer cancel()
	pods, err := v.s.kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(labels.Set{schedulingv1beta1.QueueLabel: queue}).String(), Limit: 1})
	return err != nil || len(pods.Items) > 0
}

func (v *liveView) NamespaceRefusal(q *schedulingv1beta1.Queue, namespace string) string {
	ns, ok := v.namespaces[namespace]
	if !ok {
		ns = v.s.namespace(v.ctx, namespace)
		v.namespaces[namespace] = ns
	}
	var nsLabels map[string]string
	if ns != nil {
		nsLabels = ns.Labels
	}
	return v.s.acct.Store.SelectorRefusal(q, namespace, nsLabels)
}

// namespace reads a namespace from the API server, or nil.
func (s *Server) namespace(ctx context.Context, name string) *v1.Namespace {
	ctx, cancel := context.WithTimeout(ctx, liveLookupTimeout)
	defer cancel()
	ns, err := s.kube.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return ns
}

// podGroupReader reads a PodGroup from the cache, else from the API server (one created a moment
// before its first pod).
func (s *Server) podGroupReader(ctx context.Context) accounting.PodGroupGetter {
	return func(namespace, name string) (*schedulingv1beta1.PodGroup, error) {
		if pg, err := s.acct.Store.PodGroups().PodGroups(namespace).Get(name); err == nil {
			return pg, nil
		}
		ctx, cancel := context.WithTimeout(ctx, liveLookupTimeout)
		defer cancel()
		return s.acct.Client.SchedulingV1beta1().PodGroups(namespace).Get(ctx, name, metav1.GetOptions{})
	}
}
