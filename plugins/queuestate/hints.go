package queuestate

import (
	"context"
	"maps"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	"k8s.io/client-go/tools/cache"
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

// watch follows the accounting's informers on queues and PodGroups, the one watch of each kind in
// the process, and the scheduler's on namespaces, whose labels decide which queues take their pods. Their stores are current before any handler runs, and PreEnqueue indexes a pod before
// it reads them, so a change either is seen by the check or finds the pod in the index.
func (p *QueueState) watch(namespaces cache.SharedIndexInformer) error {
	if _, err := p.acct.QueueInformer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if q, ok := obj.(*schedulingv1beta1.Queue); ok {
				p.onQueue(q, true, true)
			}
		},
		UpdateFunc: func(oldObj, obj any) {
			old, okOld := oldObj.(*schedulingv1beta1.Queue)
			q, ok := obj.(*schedulingv1beta1.Queue)
			if okOld && ok {
				changed := p.queueHold(old.Name, old) != p.queueHold(q.Name, q) ||
					!apiequality.Semantic.DeepEqual(old.Spec.NamespaceSelector, q.Spec.NamespaceSelector)
				p.onQueue(q, changed, false)
			}
		},
	}); err != nil {
		return err
	}
	if _, err := p.acct.PodGroupInformer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if pg, ok := obj.(*schedulingv1beta1.PodGroup); ok {
				p.Activate(podGroupBucket(pg.Namespace, pg.Name))
			}
		},
	}); err != nil {
		return err
	}
	_, err := namespaces.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(oldObj, obj any) {
			old, okOld := oldObj.(*v1.Namespace)
			ns, ok := obj.(*v1.Namespace)
			if okOld && ok && !maps.Equal(old.Labels, ns.Labels) {
				p.Activate(namespaceBucket(ns.Name))
			}
		},
	})
	return err
}

// onQueue settles the pods held for a queue whose hold changed, and, for a queue just added, those
// of its children: a parent that appears gives them a known state.
func (p *QueueState) onQueue(q *schedulingv1beta1.Queue, changed, added bool) {
	if changed {
		p.settleQueue(q.Name, q)
	}
	if added {
		for _, child := range p.acct.Children(q.Name) {
			p.settleQueue(child.Name, child)
		}
	}
}

// settleQueue lets in the pods a queue no longer holds, its own and those of its PodGroups, or tells
// them the new reason they wait (a queue that now exists but is Suspended, say).
func (p *QueueState) settleQueue(name string, q *schedulingv1beta1.Queue) {
	buckets := []string{queueBucket(name)}
	for _, pg := range p.acct.PodGroupsOf(name) {
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
}
