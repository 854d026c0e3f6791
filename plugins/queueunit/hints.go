package queueunit

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/eventobj"
)

// queueUnitsResource is spelled as the scheduler's dynamic informers expect: <plural>.<version>.<group>.
const queueUnitsResource fwk.EventResource = "queueunits.v1beta1." + schedulingv1beta1.GroupName

// EventsToRegister lists the events that can end a hold: the unit dequeued or deleted.
func (p *QueueUnit) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{{
		Event:             fwk.ClusterEvent{Resource: queueUnitsResource, ActionType: fwk.Update | fwk.Delete},
		QueueingHintFn:    p.isSchedulableAfterUnitChange,
		PreQueueingHintFn: p.podsHeldByUnit,
	}}, nil
}

// isSchedulableAfterUnitChange queues pod when the changed unit is its own and was dequeued or
// deleted.
func (p *QueueUnit) isSchedulableAfterUnitChange(logger klog.Logger, pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	if newObj == nil {
		old, err := eventobj.As[schedulingv1beta1.QueueUnit](oldObj)
		if err != nil {
			return fwk.Queue, err
		}
		return p.queueIfHeldBy(pod, old), nil
	}
	u, err := eventobj.As[schedulingv1beta1.QueueUnit](newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if !u.Dequeued() {
		logger.V(5).Info("QueueUnit still Enqueued", "pod", klog.KObj(pod), "queueUnit", klog.KObj(u))
		return fwk.QueueSkip, nil
	}
	return p.queueIfHeldBy(pod, u), nil
}

// queueIfHeldBy queues pod when it waits for u.
func (p *QueueUnit) queueIfHeldBy(pod *v1.Pod, u *schedulingv1beta1.QueueUnit) fwk.QueueingHint {
	for _, name := range p.Held.Names(accounting.UnitKey(u)) {
		if name.Namespace == pod.Namespace && name.Name == pod.Name {
			return fwk.Queue
		}
	}
	return fwk.QueueSkip
}

// podsHeldByUnit narrows a unit event to the pods held for that unit.
func (p *QueueUnit) podsHeldByUnit(_ klog.Logger, oldObj, newObj any) (fwk.PreQueueingHintResult, error) {
	obj := newObj
	if obj == nil {
		obj = oldObj
	}
	u, err := eventobj.As[schedulingv1beta1.QueueUnit](obj)
	if err != nil {
		return fwk.PreQueueingHintResult{AllPods: true}, err
	}
	return fwk.PreQueueingHintResult{Pods: p.Held.Names(accounting.UnitKey(u))}, nil
}
