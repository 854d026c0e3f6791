package accounting

import (
	"fmt"

	v1 "k8s.io/api/core/v1"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
)

// Refusal says why a pod or a unit of work may not be scheduled now (package policy owns the rule).
type Refusal = policy.Refusal

// QueueTakes says whether a PodGroup's queue may take its work now, before any room is counted: the
// queue exists, schedules (it is neither Suspended nor Unknown) and takes the group's namespace.
// refusal says why not when there is something to say (the queue's namespaceSelector refuses the
// namespace); it is "" while the queue is missing, Suspended or Unknown, which say so themselves.
func (a *Accounting) QueueTakes(pg *schedulingv1beta1.PodGroup) (ok bool, refusal string) {
	q, found := a.Store.Queue(a.Store.QueueOfPodGroup(pg))
	if !found {
		return false, ""
	}
	if s := a.Store.SchedulingState(q); s == schedulingv1beta1.QueueStateSuspended || s == schedulingv1beta1.QueueStateUnknown {
		return false, ""
	}
	if refusal := a.Store.NamespaceRefusal(q, pg.Namespace); refusal != "" {
		return false, refusal
	}
	return true, ""
}

// AdmittedAtOnce says whether a PodGroup that takes no room (no minResources) is in its queue: it
// enters as soon as its queue takes it, whatever the queue's other work, so its pods do not wait
// for the controller to write Inqueue (that write follows, for the status). The controller's
// admission and the Gang plugin's gate read this one rule.
func (a *Accounting) AdmittedAtOnce(pg *schedulingv1beta1.PodGroup) bool {
	if len(pg.Spec.MinResources) > 0 {
		return false
	}
	ok, _ := a.QueueTakes(pg)
	return ok
}

// WaitsForAdmission says whether a PodGroup waits for its queue to admit it: Pending, and not one
// that is in as soon as its queue takes it.
func (a *Accounting) WaitsForAdmission(pg *schedulingv1beta1.PodGroup) bool {
	pending := pg.Status.Phase == "" || pg.Status.Phase == schedulingv1beta1.PodGroupPending
	return pending && !a.AdmittedAtOnce(pg)
}

// Admit says why a pod of queue that requests req may not be scheduled now, or nil when it may, on
// the state now (policy.Admit). The capabilities count what the queue's admitted PodGroups reserve
// beyond what their members hold, but own (the pod's own group, "" for none): a gang's room is not
// taken by other pods of its queue. It reads the accounting only: no API calls.
func (a *Accounting) Admit(queue string, own WorkKey, req v1.ResourceList) *Refusal {
	return policy.Admit(a.Snapshot(), queue, req, policy.Work{HeldBack: a.reserved(queue, own, false),
		ReservedBelow: a.reservedBelow(queue, own, false)})
}

// AdmitPod is Admit for a pod of queue that requests req, on snap, which the caller took after
// counting the pod (Count): its demand is in the shares snap holds.
func (a *Accounting) AdmitPod(snap *policy.Snapshot, pod *v1.Pod, queue string, req v1.ResourceList) *Refusal {
	own := a.PodWork(pod)
	return policy.Admit(snap, queue, req, policy.Work{HeldBack: a.reserved(queue, own, false),
		ReservedBelow: a.reservedBelow(queue, own, false), Backfill: a.backfillClaim(snap)})
}

// PodWork is the key of the admitted work a pod belongs to: its PodGroup, or "".
func (a *Accounting) PodWork(pod *v1.Pod) WorkKey {
	if key := a.Gangs.Key(pod); key != "" {
		return WorkKey("PodGroup/" + key)
	}
	return ""
}

// AdmitUnit says why a unit of work (a PodGroup's minResources, a QueueUnit's resource) may not be
// admitted to queue now, or nil when it may: all of req, on top of what the queue holds and what
// its admitted units that have not started reserve, must fit its capabilities and its deserved
// share, or else fit in the idle capacity nobody below their share can claim; an ancestor's
// capability counts what the admitted work of the other queues below it reserves too (below, as
// policy.Work.ReservedBelow; nil for none).
func (a *Accounting) AdmitUnit(queue string, req, reserved v1.ResourceList, below func(string) v1.ResourceList) *Refusal {
	snap := a.Snapshot()
	if snap.Queue(queue) == nil {
		if _, stored := a.Store.Queue(queue); stored {
			// Created a moment ago: the snapshot would take it for no bar.
			return &Refusal{Unseen: true, Message: fmt.Sprintf("queue %q is not in the scheduler's snapshot yet", queue)}
		}
	}
	return policy.Admit(snap, queue, req, policy.Work{Reserved: reserved, Whole: true, ReservedBelow: below})
}
