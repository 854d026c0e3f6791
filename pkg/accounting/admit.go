package accounting

import (
	"fmt"
	"strings"

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
// the state now (policy.Admit). The capabilities count what admitted work reserves beyond what its
// pods hold (heldBack), but own (the pod's own group, "" for none): a gang's room is not taken by
// other pods of its queue. It reads the accounting only: no API calls.
func (a *Accounting) Admit(queue string, own WorkKey, req v1.ResourceList) *Refusal {
	snap := a.Snapshot()
	w := a.heldBack(snap, queue, own)
	return policy.Admit(snap, queue, req, w)
}

// AdmitPod is Admit for a pod of queue that requests req, on snap, which the caller took after
// counting the pod (Count): its demand is in the shares snap holds.
func (a *Accounting) AdmitPod(snap *policy.Snapshot, pod *v1.Pod, queue string, req v1.ResourceList) *Refusal {
	w := a.heldBack(snap, queue, a.PodWork(pod))
	w.Backfill = a.backfillClaim(snap)
	return policy.Admit(snap, queue, req, w)
}

// heldBack is what the capabilities hold back from a pod of queue, of the work own: what the queue's
// admitted PodGroups reserve, and at each capped ancestor what those of the other queues below it
// reserve. A member of a group already admitted (Inqueue) is held back by none of it: the group's
// admission counted the others' reservations, and two admitted groups waiting for each other's room
// would never run.
func (a *Accounting) heldBack(snap *policy.Snapshot, queue string, own WorkKey) policy.Work {
	if a.admittedGroup(own) {
		return policy.Work{}
	}
	w := policy.Work{HeldBack: a.reserved(queue, own, false)}
	if policy.CappedAbove(snap, queue) {
		w.ReservedBelow = a.reservedBelow(queue, own, false)
	}
	return w
}

// admittedGroup says whether the work own is a PodGroup its queue admitted and that has not run yet
// (Inqueue, as the informer's store shows it).
func (a *Accounting) admittedGroup(own WorkKey) bool {
	key, ok := strings.CutPrefix(string(own), "PodGroup/")
	if !ok {
		return false
	}
	namespace, name, _ := strings.Cut(key, "/")
	pg, err := a.Store.PodGroups().PodGroups(namespace).Get(name)
	return err == nil && pg.Status.Phase == schedulingv1beta1.PodGroupInqueue
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
