package accounting

import (
	"maps"
	"sync"

	v1 "k8s.io/api/core/v1"
	quota "k8s.io/apiserver/pkg/quota/v1"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
)

// WorkKey names a unit of admitted work in the reservations: "PodGroup/<ns>/<name>" or
// "QueueUnit/<ns>/<name>".
type WorkKey string

// PodGroupWork is the key of a PodGroup's admission.
func PodGroupWork(pg *schedulingv1beta1.PodGroup) WorkKey {
	return WorkKey("PodGroup/" + pg.Namespace + "/" + pg.Name)
}

// UnitWork is the key of a QueueUnit's admission.
func UnitWork(u *schedulingv1beta1.QueueUnit) WorkKey { return WorkKey("QueueUnit/" + UnitKey(u)) }

// reservations is the one place that holds the room admitted work keeps in its queue until its pods
// hold it: an admitted (Inqueue) PodGroup keeps its minResources less what its bound members hold;
// a Dequeued QueueUnit keeps its resource less what its bound pods hold until its consumer is done;
// and work admitted a moment ago keeps its whole request until the informer shows its new phase, so
// that two admissions in quick succession never count on the same room.
type reservations struct {
	// admitting makes each AdmitWork one step: check, then reserve. Only the controller admits.
	admitting sync.Mutex
	// mu guards what follows, for short reads: a scheduling cycle reads the reservations too.
	mu sync.Mutex
	// admitted holds work admitted but not yet shown admitted by the informer.
	admitted map[WorkKey]v1.ResourceList
	// consumerDone says whether a Dequeued unit's consumer finished or is gone; the controller, which
	// watches consumers, supplies it. Without it, a Dequeued unit keeps its reservation.
	consumerDone func(*schedulingv1beta1.QueueUnit) bool
}

// UseConsumerState tells the reservations whether a Dequeued unit's consumer is done.
func (a *Accounting) UseConsumerState(done func(*schedulingv1beta1.QueueUnit) bool) {
	a.reservations.mu.Lock()
	defer a.reservations.mu.Unlock()
	a.reservations.consumerDone = done
}

// AdmitWork admits a unit of work (a PodGroup's minResources, a QueueUnit's resource) to queue when
// req fits there on top of what the queue holds and what its other admitted work reserves (see
// AdmitUnit), and then reserves it, in one step. It returns why not otherwise.
func (a *Accounting) AdmitWork(key WorkKey, queue string, req v1.ResourceList) *Refusal {
	a.reservations.admitting.Lock()
	defer a.reservations.admitting.Unlock()
	var below func(string) v1.ResourceList
	if policy.CappedAbove(a.Snapshot(), queue) {
		below = a.reservedBelow(queue, key, true)
	}
	if refusal := a.AdmitUnit(queue, req, a.reserved(queue, key, true), below); refusal != nil {
		return refusal
	}
	a.reservations.mu.Lock()
	a.reservations.admitted[key] = req
	a.reservations.mu.Unlock()
	return nil
}

// reservesLess says whether a PodGroup's update may shrink what it reserves: it left Inqueue, it left
// Pending for neither Inqueue nor Pending (admitted a moment ago, it went straight on), or its
// minResources changed while in one of those phases. A group's first Pending, and its admission to
// Inqueue, give nothing back.
func reservesLess(old, pg *schedulingv1beta1.PodGroup) bool {
	if !reservingPhase(old.Status.Phase) {
		return false
	}
	if !quota.Equals(old.Spec.MinResources, pg.Spec.MinResources) {
		return true
	}
	if old.Status.Phase == schedulingv1beta1.PodGroupInqueue {
		return pg.Status.Phase != schedulingv1beta1.PodGroupInqueue
	}
	return !reservingPhase(pg.Status.Phase)
}

func reservingPhase(phase schedulingv1beta1.PodGroupPhase) bool {
	return phase == "" || phase == schedulingv1beta1.PodGroupPending || phase == schedulingv1beta1.PodGroupInqueue
}

// ForgetWork drops the reservation of work whose admission did not go through.
func (a *Accounting) ForgetWork(key WorkKey) {
	a.reservations.mu.Lock()
	defer a.reservations.mu.Unlock()
	delete(a.reservations.admitted, key)
}

// reserved sums what the queue's admitted work reserves, but except: its admitted PodGroups and, with
// units, its Dequeued units. Work the informer shows admitted leaves the admitted-a-moment-ago list.
func (a *Accounting) reserved(queue string, except WorkKey, units bool) v1.ResourceList {
	admitted, consumerDone := a.admittedSnapshot()
	var total v1.ResourceList // nil while nothing is reserved: most queues at most admissions
	var shown []WorkKey
	for _, pg := range a.admittedPodGroupsOf(queue) {
		key := PodGroupWork(pg)
		just, justAdmitted := admitted[key]
		pending := pg.Status.Phase == "" || pg.Status.Phase == schedulingv1beta1.PodGroupPending
		switch {
		case key == except:
		case pg.Status.Phase == schedulingv1beta1.PodGroupInqueue:
			total = quota.Add(total, quota.SubtractWithNonNegativeResult(pg.Spec.MinResources, a.groupAllocated(pg)))
		case justAdmitted && pending:
			total = quota.Add(total, just)
		}
		if justAdmitted && !pending {
			shown = append(shown, key)
		}
	}
	if units {
		for _, u := range a.Store.QueueUnitsOf(queue) {
			key := UnitWork(u)
			just, justAdmitted := admitted[key]
			switch {
			case u.Dequeued():
				shown = append(shown, key)
				if key != except && (consumerDone == nil || !consumerDone(u)) {
					total = quota.Add(total, quota.SubtractWithNonNegativeResult(u.Spec.Resource, a.Pods.UnitAllocated(UnitKey(u))))
				}
			case justAdmitted && key != except:
				total = quota.Add(total, just)
			}
		}
	}
	a.forgetAdmitted(shown)
	return total
}

// reservedBelow says, for an ancestor of queue, what the admitted work of the queues below it, queue
// and except aside, reserves (reserved, with units as there): the ancestor's capability counts it,
// so that work admitted in one queue keeps its room from the pods and work of its siblings.
func (a *Accounting) reservedBelow(queue string, except WorkKey, units bool) func(string) v1.ResourceList {
	return func(ancestor string) v1.ResourceList {
		var total v1.ResourceList
		for _, name := range a.Store.Subtree(ancestor) {
			if name != queue {
				total = quota.Add(total, a.reserved(name, except, units))
			}
		}
		return total
	}
}

// admittedSnapshot copies the work admitted a moment ago, and returns the consumer state function.
func (a *Accounting) admittedSnapshot() (map[WorkKey]v1.ResourceList, func(*schedulingv1beta1.QueueUnit) bool) {
	a.reservations.mu.Lock()
	defer a.reservations.mu.Unlock()
	if len(a.reservations.admitted) == 0 {
		return nil, a.reservations.consumerDone
	}
	return maps.Clone(a.reservations.admitted), a.reservations.consumerDone
}

// forgetAdmitted drops work the informer shows admitted from the admitted-a-moment-ago list.
func (a *Accounting) forgetAdmitted(keys []WorkKey) {
	if len(keys) == 0 {
		return
	}
	a.reservations.mu.Lock()
	defer a.reservations.mu.Unlock()
	for _, key := range keys {
		delete(a.reservations.admitted, key)
	}
}

// admittedPodGroupsOf returns the queue's PodGroups that may reserve room: Pending (admitted a
// moment ago) or Inqueue, with minResources.
func (a *Accounting) admittedPodGroupsOf(queue string) []*schedulingv1beta1.PodGroup {
	var out []*schedulingv1beta1.PodGroup
	for _, phase := range []string{"", string(schedulingv1beta1.PodGroupPending), string(schedulingv1beta1.PodGroupInqueue)} {
		out = append(out, byIndex[schedulingv1beta1.PodGroup](a.Store.podGroupIndex, byQueuePhase, queuePhaseKey(queue, phase))...)
	}
	return out
}

func queuePhaseKey(queue, phase string) string { return queue + "/" + phase }
