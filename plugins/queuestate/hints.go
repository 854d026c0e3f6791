package queuestate

import (
	"context"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/labels"

	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

// EventsToRegister registers no cluster event: what ends a hold is a change of a queue or a PodGroup,
// which the accounting's informers deliver (watch), and the scheduler keeps no watch of its own on
// them. Returning an empty list, rather than not implementing EnqueueExtensions, keeps other events
// from waking held pods for nothing.
func (p *QueueState) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return nil, nil
}

// watch follows the accounting's informers on queues, PodGroups and namespaces (whose labels decide
// which queues take their pods), the one watch of each kind in the process. Their stores are current
// before any handler runs, and PreEnqueue indexes a pod before it reads them, so a change either is
// seen by the check or finds the pod in the index.
func (p *QueueState) watch() error {
	if _, err := p.acct.Store.QueueInformer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if q, ok := obj.(*schedulingv1beta1.Queue); ok {
				p.onQueue(q, true, true)
			}
		},
		UpdateFunc: func(oldObj, obj any) {
			old, okOld := oldObj.(*schedulingv1beta1.Queue)
			q, ok := obj.(*schedulingv1beta1.Queue)
			if okOld && ok {
				p.onQueue(q, p.queueHold(old.Name, old) != p.queueHold(q.Name, q), false)
				if !apiequality.Semantic.DeepEqual(old.Spec.NamespaceSelector, q.Spec.NamespaceSelector) {
					p.onSelector(q.Name)
				}
			}
		},
	}); err != nil {
		return err
	}
	if _, err := p.acct.Store.PodGroupInformer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if pg, ok := obj.(*schedulingv1beta1.PodGroup); ok {
				p.Activate(podGroupBucket(pg.Namespace, pg.Name))
			}
		},
	}); err != nil {
		return err
	}
	return p.acct.Store.OnNamespaceLabels(func(namespace string) {
		for _, q := range p.acct.Store.AllQueues() {
			p.Activate(namespaceBucket(q.Name, namespace))
		}
	})
}

// onQueue settles the pods held for a queue whose hold changed, and, for a queue just added, those
// of its children: a parent that appears gives them a known state.
func (p *QueueState) onQueue(q *schedulingv1beta1.Queue, changed, added bool) {
	if changed {
		p.settleQueue(q.Name, q)
	}
	if added {
		for _, child := range p.acct.Store.Children(q.Name) {
			p.settleQueue(child.Name, child)
		}
	}
}

// settleQueue lets in the pods a queue no longer holds, its own and those of its PodGroups, or tells
// them the new reason they wait (a queue that now exists but is Suspended, say).
func (p *QueueState) settleQueue(name string, q *schedulingv1beta1.Queue) {
	buckets := []string{queueBucket(name)}
	for _, pg := range p.acct.Store.PodGroupsOf(name) {
		buckets = append(buckets, podGroupBucket(pg.Namespace, pg.Name))
	}
	why := p.queueHold(name, q)
	for _, b := range buckets {
		if why.Message == "" {
			p.Activate(b)
		} else {
			p.Tell(b, why)
		}
	}
	if why.Message != "" {
		p.holdWaiting(name)
	}
}

// holdWaiting brings the queue's pods that wait in the scheduler's queue after an attempt back to
// PreEnqueue, which now holds them and says why: they would otherwise keep the reason of their last
// attempt (the queue's capability, say) until the scheduler's periodic flush.
func (p *QueueState) holdWaiting(queue string) {
	waiting := p.acct.Pods.WaitingPods()[queue]
	if len(waiting) == 0 || p.Activator == nil {
		return
	}
	pods := make(map[string]*v1.Pod, len(waiting))
	for _, w := range waiting {
		pods[w.Pod.Namespace+"/"+w.Pod.Name] = w.Pod
	}
	p.Activator(klog.Background(), pods)
}

// onSelector brings back the pods a queue refused for their namespace: its new selector may take
// them. A selector changes seldom; the namespaces are listed from the cache.
func (p *QueueState) onSelector(queue string) {
	namespaces, err := p.acct.Store.Namespaces().List(labels.Everything())
	if err != nil {
		return
	}
	for _, ns := range namespaces {
		p.Activate(namespaceBucket(queue, ns.Name))
	}
}
