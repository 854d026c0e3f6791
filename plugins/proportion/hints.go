package proportion

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
)

// EventsToRegister lists the cluster events that can make room for a pod this plugin rejected. A
// larger deserved share, and a queue's new capability, weight or guarantee, come from the accounting
// (its shares and its informer on queues, the one watch of that kind) and activate the queue's
// rejected pods directly.
func (p *Proportion) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		// A bound pod that goes away frees room in its queue, or idle room to borrow.
		{Event: fwk.ClusterEvent{Resource: fwk.AssignedPod, ActionType: fwk.Delete}, QueueingHintFn: isSchedulableAfterPodDelete},
		// A new node, or more allocatable, grows every share and the idle room.
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeAllocatable}},
	}, nil
}

// isSchedulableAfterPodDelete queues the pod when the deleted pod held resources.
func isSchedulableAfterPodDelete(_ klog.Logger, _ *v1.Pod, oldObj, _ any) (fwk.QueueingHint, error) {
	if deleted, ok := oldObj.(*v1.Pod); ok && deleted.Spec.NodeName == "" {
		return fwk.QueueSkip, nil
	}
	return fwk.Queue, nil
}
