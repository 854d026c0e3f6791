package accounting

import (
	"slices"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	quota "k8s.io/apiserver/pkg/quota/v1"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
	"github.com/queue-scheduler/queue-scheduler/pkg/timeline"
)

// WaitingGang is a gang its queue takes that still waits for room: at least minMember of its pods
// exist, fewer hold room, and its queue admits what the rest ask for.
type WaitingGang struct {
	// Key is "namespace/name" of the PodGroup.
	Key      string
	PodGroup *schedulingv1beta1.PodGroup
	Queue    string
	// Place is where the gang stands in the scheduler's order.
	Place policy.Place
	// Members are the members to place for the gang to run: Short of its pods that hold no room, in
	// name order.
	Members []*v1.Pod
}

// startPlan is the reservations of the waiting gangs, as the Backfill plugin last planned them.
type startPlan struct {
	latest atomic.Pointer[timeline.Plan]
	// onChange hear of each gang whose reservation was made, moved or dropped.
	onChange listeners
}

// WaitingGangs returns the first limit waiting gangs in the scheduler's order (priority, then the
// PodGroup's creation). A gang of a queue that does not take it (missing, Suspended, refusing its
// namespace), not admitted yet, short of members, or whose queue would refuse the room its members
// ask for, is not waiting for room and is left out. It reads the caches only.
func (a *Accounting) WaitingGangs(limit int) []WaitingGang {
	if limit <= 0 {
		return nil
	}
	a.usage.mu.RLock()
	keys := make([]string, 0, len(a.usage.asked))
	for key := range a.usage.asked {
		keys = append(keys, key)
	}
	a.usage.mu.RUnlock()
	var out []WaitingGang
	for _, key := range keys {
		if g, ok := a.waitingGang(key); ok {
			out = append(out, g)
		}
	}
	slices.SortFunc(out, func(x, y WaitingGang) int {
		switch {
		case policy.Ahead(x.Place, y.Place):
			return -1
		case policy.Ahead(y.Place, x.Place):
			return 1
		}
		return 0
	})
	return out[:min(limit, len(out))]
}

// waitingGang reads the gang of PodGroup key, if it waits for room.
func (a *Accounting) waitingGang(key string) (WaitingGang, bool) {
	pg, ok := a.PodGroupByKey(key)
	if !ok {
		return WaitingGang{}, false
	}
	if takes, _ := a.QueueTakes(pg); !takes || (pg.Status.Phase != schedulingv1beta1.PodGroupInqueue && !a.AdmittedAtOnce(pg)) {
		return WaitingGang{}, false
	}
	members := a.GangMembers(key)
	slices.SortFunc(members, func(x, y *v1.Pod) int {
		switch {
		case x.Name < y.Name:
			return -1
		case x.Name > y.Name:
			return 1
		}
		return 0
	})
	pending, asked := a.pendingOf(members)
	short := int(pg.Spec.MinMember) - (len(members) - len(pending))
	if short <= 0 || len(pending) < short {
		return WaitingGang{}, false
	}
	queue := a.QueueOfPodGroup(pg)
	// A refusal that only waits for fresh shares is gone in a moment: the reservation stays.
	if refusal := a.Admit(queue, PodGroupWork(pg), quota.Add(v1.ResourceList{}, asked(short))); refusal != nil && !refusal.WaitsForShares {
		return WaitingGang{}, false
	}
	return WaitingGang{Key: key, PodGroup: pg, Queue: queue, Members: pending[:short], Place: policy.Place{
		Priority: a.PodGroupPriority(pg), Since: pg.CreationTimestamp.Time, Namespace: pg.Namespace, Name: pg.Name,
	}}, true
}

// pendingOf returns the members that hold no room, in the order given, and what the first n of them
// ask for.
func (a *Accounting) pendingOf(members []*v1.Pod) ([]*v1.Pod, func(n int) v1.ResourceList) {
	a.usage.mu.RLock()
	defer a.usage.mu.RUnlock()
	var pending []*v1.Pod
	var requests []v1.ResourceList
	for _, pod := range members {
		if p, counted := a.usage.pods[pod.UID]; !counted || !p.holds() {
			pending = append(pending, pod)
			requests = append(requests, p.requests)
		}
	}
	return pending, func(n int) v1.ResourceList {
		var sum v1.ResourceList
		for _, r := range requests[:n] {
			sum = quota.Add(sum, r)
		}
		return sum
	}
}

// PublishStartPlan makes plan the reservations every reader sees, and tells the listeners of each
// gang whose reservation was made, moved or dropped.
func (a *Accounting) PublishStartPlan(plan *timeline.Plan) {
	last := a.startPlan.latest.Swap(plan)
	for _, gang := range changedReservations(last, plan) {
		a.startPlan.onChange.notify(gang)
	}
}

// StartPlan is the reservations last published, or nil when none was.
func (a *Accounting) StartPlan() *timeline.Plan { return a.startPlan.latest.Load() }

// Reservation is the reservation of the PodGroup "namespace/name", or nil.
func (a *Accounting) Reservation(gang string) *timeline.Reservation {
	return a.startPlan.latest.Load().Reservation(gang)
}

// OnReservationChange registers f to be told the key of each PodGroup whose reservation was made,
// moved (another start or other nodes) or dropped; f must not block.
func (a *Accounting) OnReservationChange(f func(gang string)) { a.startPlan.onChange.add(f) }

// changedReservations are the gangs whose reservation differs between two plans: made, dropped, on
// other nodes or room, or to start at another time.
func changedReservations(last, next *timeline.Plan) []string {
	var out []string
	var lastList, nextList []timeline.Reservation
	if last != nil {
		lastList = last.Reservations
	}
	if next != nil {
		nextList = next.Reservations
	}
	for _, r := range lastList {
		if n := next.Reservation(r.Gang); n == nil || !sameReservation(last, next, &r, n) {
			out = append(out, r.Gang)
		}
	}
	for _, r := range nextList {
		if last.Reservation(r.Gang) == nil {
			out = append(out, r.Gang)
		}
	}
	return out
}

// sameReservation says whether a of plan last and b of plan next hold the same room from the same
// start: two that were both due when planned (starting at once) have the same start.
func sameReservation(last, next *timeline.Plan, a, b *timeline.Reservation) bool {
	due := a.Due(last.At) && b.Due(next.At)
	sameTimes := due || a.Start.Equal(b.Start) && a.End.Equal(b.End)
	if !sameTimes || len(a.Nodes) != len(b.Nodes) {
		return false
	}
	for i := range a.Nodes {
		if a.Nodes[i].Node != b.Nodes[i].Node || !slices.Equal(a.Nodes[i].Amount, b.Nodes[i].Amount) {
			return false
		}
	}
	return true
}
