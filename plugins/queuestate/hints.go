package queuestate

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/eventobj"
)

// The resources whose events can let a held pod in, spelled as the scheduler's dynamic informers
// expect: <plural>.<version>.<group>.
const (
	queuesResource    fwk.EventResource = "queues.v1beta1." + schedulingv1beta1.GroupName
	podGroupsResource fwk.EventResource = "podgroups.v1beta1." + schedulingv1beta1.GroupName
)

// EventsToRegister lists the events that can end a hold, each with a hint that checks whether it
// ends this pod's.
func (p *QueueState) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		// A queue created, resumed, opened, or whose state became known can let its held pods in.
		{
			Event:             fwk.ClusterEvent{Resource: queuesResource, ActionType: fwk.Add | fwk.Update},
			QueueingHintFn:    p.isSchedulableAfterQueueChange,
			PreQueueingHintFn: p.podsHeldByQueue,
		},
		// A PodGroup created gives the pods that name it a queue.
		{
			Event:             fwk.ClusterEvent{Resource: podGroupsResource, ActionType: fwk.Add},
			QueueingHintFn:    p.isSchedulableAfterPodGroupAdd,
			PreQueueingHintFn: p.podsHeldByPodGroup,
		},
	}, nil
}

// isSchedulableAfterQueueChange queues pod when the changed queue is the pod's and no longer holds it.
func (p *QueueState) isSchedulableAfterQueueChange(logger klog.Logger, pod *v1.Pod, _, newObj any) (fwk.QueueingHint, error) {
	q, err := eventobj.As[schedulingv1beta1.Queue](newObj)
	if err != nil {
		return fwk.Queue, err
	}
	name, err := p.acct.QueueOf(pod)
	if err != nil || name != q.Name {
		return fwk.QueueSkip, nil
	}
	if message := p.holdMessage(q.Name, q); message != "" {
		logger.V(5).Info("Queue still holds the pod", "pod", klog.KObj(pod), "reason", message)
		return fwk.QueueSkip, nil
	}
	return fwk.Queue, nil
}

// isSchedulableAfterPodGroupAdd queues pod when the new PodGroup is the one it names.
func (p *QueueState) isSchedulableAfterPodGroupAdd(_ klog.Logger, pod *v1.Pod, _, newObj any) (fwk.QueueingHint, error) {
	pg, err := eventobj.As[schedulingv1beta1.PodGroup](newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if pg.Namespace != pod.Namespace || pg.Name != pod.Labels[schedulingv1beta1.PodGroupLabel] {
		return fwk.QueueSkip, nil
	}
	return fwk.Queue, nil
}

// podsHeldByQueue narrows a queue event to the pods held for that queue.
func (p *QueueState) podsHeldByQueue(_ klog.Logger, _, newObj any) (fwk.PreQueueingHintResult, error) {
	q, err := eventobj.As[schedulingv1beta1.Queue](newObj)
	if err != nil {
		return fwk.PreQueueingHintResult{AllPods: true}, err
	}
	return fwk.PreQueueingHintResult{Pods: p.Held.Names(queueBucket(q.Name))}, nil
}

// podsHeldByPodGroup narrows a PodGroup event to the pods waiting for that PodGroup.
func (p *QueueState) podsHeldByPodGroup(_ klog.Logger, _, newObj any) (fwk.PreQueueingHintResult, error) {
	pg, err := eventobj.As[schedulingv1beta1.PodGroup](newObj)
	if err != nil {
		return fwk.PreQueueingHintResult{AllPods: true}, err
	}
	return fwk.PreQueueingHintResult{Pods: p.Held.Names(podGroupBucket(pg.Namespace, pg.Name))}, nil
}
