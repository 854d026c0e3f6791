package proportion

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

// queuesResource is the queue resource as the scheduler's dynamic informers spell it.
const queuesResource fwk.EventResource = "queues.v1beta1." + schedulingv1beta1.GroupName

// EventsToRegister lists the events that can make room for a pod this plugin rejected. A larger
// deserved share, which comes from the accounting rather than an API event, activates the queue's
// rejected pods directly.
func (p *Proportion) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		// A bound pod that goes away frees room in its queue, or idle room to borrow.
		{Event: fwk.ClusterEvent{Resource: fwk.AssignedPod, ActionType: fwk.Delete}, QueueingHintFn: isSchedulableAfterPodDelete},
		// A new node, or more allocatable, grows every share and the idle room.
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeAllocatable}},
		// A queue's new capability, weight or guarantee changes what it may take.
		{Event: fwk.ClusterEvent{Resource: queuesResource, ActionType: fwk.Update}, QueueingHintFn: isSchedulableAfterQueueSpecChange},
	}, nil
}

// isSchedulableAfterPodDelete queues the pod when the deleted pod held resources.
func isSchedulableAfterPodDelete(_ klog.Logger, _ *v1.Pod, oldObj, _ any) (fwk.QueueingHint, error) {
	if deleted, ok := oldObj.(*v1.Pod); ok && deleted.Spec.NodeName == "" {
		return fwk.QueueSkip, nil
	}
	return fwk.Queue, nil
}

// isSchedulableAfterQueueSpecChange queues the pod when a queue's spec changed; status writes,
// which are most queue updates, change nothing this plugin checks.
func isSchedulableAfterQueueSpecChange(_ klog.Logger, _ *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	type generationer interface{ GetGeneration() int64 }
	o, okOld := oldObj.(generationer)
	n, okNew := newObj.(generationer)
	if okOld && okNew && o.GetGeneration() == n.GetGeneration() {
		return fwk.QueueSkip, nil
	}
	return fwk.Queue, nil
}
