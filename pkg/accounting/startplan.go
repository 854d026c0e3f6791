package accounting

import (
	"math"
	"slices"
	"strings"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	quota "k8s.io/apiserver/pkg/quota/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/gangs"
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
	// Members are the members to place for the gang to run: those in Placing, then the largest of
	// its pods that hold no room, as many as the gang is short of.
	Members []*v1.Pod
	// Placing are the members the scheduler has put on a node (Reserve) that are not bound: they wait
	// at Permit for the rest, and go back to the queue if the rest do not come. Until the gang runs,
	// their room is the gang's, not theirs.
	Placing []*v1.Pod
}

// StartPlans is the reservations of the waiting gangs, as the Backfill plugin last planned them:
// Backfill publishes them, the accounting's snapshots, the Gang plugin and the controller read them.
type StartPlans struct {
	latest atomic.Pointer[timeline.Plan]
	// planned: a planner runs in this process, and will publish a plan.
	planned atomic.Bool
	events  *Events
}

// WaitingGangs returns the first limit waiting gangs in the scheduler's order (priority, then the
// PodGroup's creation), taking each queue's first before any queue's second (roundRobin), and none
// that skip names. A gang of a queue that does not take it (missing, Suspended, refusing its
// namespace), not admitted yet, short of members, or whose queue would refuse the room its members
// ask for, is not waiting for room and is left out. It reads the caches only.
func (a *Accounting) WaitingGangs(limit int, skip func(key string) bool) []WaitingGang {
	if limit <= 0 {
		return nil
	}
	a.Pods.mu.RLock()
	keys := make([]string, 0, len(a.Pods.asked))
	for key := range a.Pods.asked {
		keys = append(keys, key)
	}
	a.Pods.mu.RUnlock()
	var out []WaitingGang
	for _, key := range keys {
		if skip != nil && skip(key) {
			continue
		}
		if g, ok := a.waitingGang(key); ok {
			out = append(out, g)
		}
	}
	slices.SortFunc(out, func(x, y WaitingGang) int { return policy.Compare(x.Place, y.Place) })
	return roundRobin(out, limit)
}

// roundRobin picks the first limit gangs one queue's gang at a time, in rounds: each queue's first
// waiting gang, then each one's second, and so on, so that one queue's backlog cannot hold every
// reservation. The gangs picked keep their order.
func roundRobin(gangs []WaitingGang, limit int) []WaitingGang {
	if len(gangs) <= limit {
		return gangs
	}
	round, seen := make([]int, len(gangs)), map[string]int{}
	for i, g := range gangs {
		round[i] = seen[g.Queue]
		seen[g.Queue]++
	}
	picked := make([]int, len(gangs))
	for i := range picked {
		picked[i] = i
	}
	slices.SortStableFunc(picked, func(x, y int) int { return round[x] - round[y] })
	picked = picked[:limit]
	slices.Sort(picked)
	out := make([]WaitingGang, limit)
	for i, at := range picked {
		out[i] = gangs[at]
	}
	return out
}

// waitingGang reads the gang of PodGroup key, if it waits for room. The members planned are those
// placed and waiting at Permit, then the largest of those that hold no room (by cpu, then memory,
// then name) that make the gang whole (gangs.Fill: those of the tasks it lacks first), so that the
// plan keeps room enough whichever of them run; its priority is its
// members' highest, as the scheduler's queue sort reads it. A member with scheduling gates waits
// for whoever set them, not for room: it is not counted.
func (a *Accounting) waitingGang(key string) (WaitingGang, bool) {
	pg, ok := a.Gangs.PodGroup(key)
	if !ok {
		return WaitingGang{}, false
	}
	if takes, _ := a.QueueTakes(pg); !takes || (pg.Status.Phase != schedulingv1beta1.PodGroupInqueue && !a.AdmittedAtOnce(pg)) {
		return WaitingGang{}, false
	}
	placing, pending, bound := a.holdOf(a.Gangs.Members(key))
	placed := gangs.Count(append(slices.Clone(bound), placing...), func(*v1.Pod) bool { return true })
	if gangs.Short(pg, placed) == 0 {
		return WaitingGang{}, false
	}
	slices.SortFunc(pending, largestFirst)
	candidates, requests := make([]*v1.Pod, len(pending)), make(map[*v1.Pod]v1.ResourceList, len(pending))
	for i, p := range pending {
		candidates[i], requests[p.pod] = p.pod, p.requests
	}
	picked, whole := gangs.Fill(pg, placed, candidates)
	if !whole {
		return WaitingGang{}, false
	}
	planned, asked, priority := slices.Clone(placing), v1.ResourceList{}, int32(math.MinInt32)
	for _, p := range picked {
		planned, asked = append(planned, p), quota.Add(asked, requests[p])
	}
	for _, p := range planned {
		priority = max(priority, corev1helpers.PodPriority(p))
	}
	queue := a.Store.QueueOfPodGroup(pg)
	if refusal := a.Admit(queue, PodGroupWork(pg), asked); refusal != nil {
		return WaitingGang{}, false
	}
	return WaitingGang{Key: key, PodGroup: pg, Queue: queue, Members: planned, Placing: placing, Place: policy.Place{
		Priority: priority, Since: pg.CreationTimestamp.Time, Namespace: pg.Namespace, Name: pg.Name,
	}}, true
}

// pendingMember is a member that holds no room, and what it asks for.
type pendingMember struct {
	pod      *v1.Pod
	requests v1.ResourceList
}

// largestFirst orders members by cpu, then memory, largest first, then by name.
func largestFirst(x, y pendingMember) int {
	for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory} {
		qx, qy := x.requests[name], y.requests[name]
		if c := qy.Cmp(qx); c != 0 {
			return c
		}
	}
	return strings.Compare(x.pod.Name, y.pod.Name)
}

// holdOf sorts a gang's members by the room they hold: placing, assumed at Reserve and not on a node
// as the informer shows them; pending, holding none, with what each asks for (as counted, or for a
// pod not counted yet, its requests), a member let go at Unreserve included; and how many the
// informer shows on a node. A gated member is none of them.
func (a *Accounting) holdOf(members []*v1.Pod) (placing []*v1.Pod, pending []pendingMember, bound []*v1.Pod) {
	a.Pods.mu.RLock()
	defer a.Pods.mu.RUnlock()
	for _, pod := range members {
		p, counted := a.Pods.pods[pod.UID]
		switch {
		case len(pod.Spec.SchedulingGates) > 0:
		case !counted:
			pending = append(pending, pendingMember{pod, resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})})
		case p.bound:
			bound = append(bound, pod)
		case p.assumed:
			placing = append(placing, pod)
		default:
			pending = append(pending, pendingMember{pod, p.requests})
		}
	}
	return placing, pending, bound
}

// NewStartPlans returns no plan, none expected, whose changes of reservations are told on events.
func NewStartPlans(events *Events) *StartPlans { return &StartPlans{events: events} }

// Expect says that a planner (the Backfill plugin) runs in this process: until it publishes its
// first plan, the reservations are not known, rather than none.
func (p *StartPlans) Expect() { p.planned.Store(true) }

// Known says whether the reservations are known: a plan was published, or no planner runs and none
// are held.
func (p *StartPlans) Known() bool {
	return p.latest.Load() != nil || !p.planned.Load()
}

// Publish makes plan the reservations every reader sees, and tells the subscribers of each gang
// whose reservation was made, moved or dropped, or that was found no start or set aside, or no
// longer is (Events.Reservation).
func (p *StartPlans) Publish(plan *timeline.Plan) {
	last := p.latest.Swap(plan)
	for _, gang := range changedReservations(last, plan) {
		p.events.Reservation.notify(gang)
	}
}

// Latest is the reservations last published, or nil when none was.
func (p *StartPlans) Latest() *timeline.Plan { return p.latest.Load() }

// Reservation is the reservation of the PodGroup "namespace/name", or nil.
func (p *StartPlans) Reservation(gang string) *timeline.Reservation {
	return p.latest.Load().Reservation(gang)
}

// backfillClaim is the part of the queues' claims that the reservations starting later keep on the
// nodes (policy.ReservedClaims): it does not bar other work now, as the reservations' guards keep it
// free for the gangs (a pod may take it only if it is gone by then). Nil while no gang holds such a
// reservation.
func (a *Accounting) backfillClaim(snap *policy.Snapshot) v1.ResourceList {
	plan := a.StartPlans.Latest()
	if plan.Empty() {
		return nil
	}
	now, byQueue := a.clock.Now(), map[string]v1.ResourceList{}
	for i := range plan.Reservations {
		r := &plan.Reservations[i]
		pg, ok := a.Gangs.PodGroup(r.Gang)
		if !ok || !r.Start.After(now) {
			continue
		}
		queue := a.Store.QueueOfPodGroup(pg)
		byQueue[queue] = quota.Add(byQueue[queue], resourceList(plan.AmountOf(r)))
	}
	if len(byQueue) == 0 {
		return nil
	}
	return policy.ReservedClaims(snap, byQueue)
}

// resourceList converts amounts of the plan's units (milli-cpu, whole units) to a ResourceList, the
// pod count left out.
func resourceList(amounts map[v1.ResourceName]int64) v1.ResourceList {
	out := v1.ResourceList{}
	for name, x := range amounts {
		switch name {
		case v1.ResourcePods:
		case v1.ResourceCPU:
			out[name] = *resource.NewMilliQuantity(x, resource.DecimalSI)
		case v1.ResourceMemory:
			out[name] = *resource.NewQuantity(x, resource.BinarySI)
		default:
			out[name] = *resource.NewQuantity(x, resource.DecimalSI)
		}
	}
	return out
}

// changedReservations are the gangs whose reservation differs between two plans: made, dropped, on
// other nodes or room, or to start at another time; and the gangs found no start, or no longer.
func changedReservations(last, next *timeline.Plan) []string {
	var out []string
	for _, r := range reservationsOf(last) {
		if n := next.Reservation(r.Gang); n == nil || !sameReservation(last, next, &r, n) {
			out = append(out, r.Gang)
		}
	}
	for _, r := range reservationsOf(next) {
		if last.Reservation(r.Gang) == nil {
			out = append(out, r.Gang)
		}
	}
	out = appendMoved(out, unplacedOf(last), unplacedOf(next))
	return appendMoved(out, lapsedOf(last), lapsedOf(next))
}

// appendMoved appends to out the gangs in one of last and next only, that out does not hold.
func appendMoved(out, last, next []string) []string {
	for _, pair := range [][2][]string{{last, next}, {next, last}} {
		for _, gang := range pair[0] {
			if !slices.Contains(pair[1], gang) && !slices.Contains(out, gang) {
				out = append(out, gang)
			}
		}
	}
	return out
}

func lapsedOf(p *timeline.Plan) []string {
	if p == nil {
		return nil
	}
	out := make([]string, len(p.Lapsed))
	for i, l := range p.Lapsed {
		out[i] = l.Gang
	}
	return out
}

func reservationsOf(p *timeline.Plan) []timeline.Reservation {
	if p == nil {
		return nil
	}
	return p.Reservations
}

func unplacedOf(p *timeline.Plan) []string {
	if p == nil {
		return nil
	}
	return p.Unplaced
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
