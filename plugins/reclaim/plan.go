package reclaim

import (
	"maps"

	v1 "k8s.io/api/core/v1"
	policy "k8s.io/api/policy/v1"
	quota "k8s.io/apiserver/pkg/quota/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	fwk "k8s.io/kube-scheduler/framework"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

// planKey is where PostFilter leaves the plan for the dry run.
const planKey fwk.StateKey = Name + "/plan"

// plan is what the dry run of one preemptor knows of the queues. It is read-only once written;
// each node's evaluation keeps its own tally.
type plan struct {
	queue    string
	priority int32
	req      v1.ResourceList
	// preempt: the queue has lower-priority pods of its own that an ordinary preemption may take.
	preempt bool
	// spare is, per reclaimable queue above its share, what may be taken from it; empty unless the
	// preemptor's queue is below its share.
	spare map[string]v1.ResourceList
	// remembered is, per queue of spare, its policy.RememberedShare: among victims otherwise equal,
	// those of the queue that used the most go first.
	remembered map[string]float64
	// gangsEvicting counts per gang the members chosen as victims and not gone yet; evicting lists
	// those victims.
	gangsEvicting map[string]int
	evicting      []*v1.Pod
	// gang is the preemptor's PodGroup ("namespace/name") when a gang preempts as one: its own
	// members are never its victims.
	gang string
}

// Clone returns the plan itself: it does not change.
func (p *plan) Clone() fwk.StateData { return p }

// victimKind says how a pod may be taken.
type victimKind int

const (
	// notAVictim may not be taken.
	notAVictim victimKind = iota
	// preemptible is a lower-priority pod of the preemptor's own queue.
	preemptible
	// reclaimable is a pod of another queue above its share.
	reclaimable
)

// victim is one pod that may be taken, or a whole gang when taking any of its members would leave
// it below minMember.
type victim struct {
	kind     victimKind
	queue    string
	priority int32
	// pods are the victim's pods on the node evaluated; others, a whole gang's pods elsewhere.
	pods, others []fwk.PodInfo
	requests     v1.ResourceList // of all its pods
	gang         string
	wholeGang    bool
	slack        int   // a gang member's: how many members its gang has above minMember
	started      int64 // start time, for ordering; later starts go first
	// remembered is its queue's remembered share (plan.remembered), for ordering: larger goes first.
	remembered float64
}

// classify says whether and how pod may be taken for the plan's preemptor.
func (p *plan) classify(pod *v1.Pod, queueOf func(*v1.Pod) (string, error), gangOf func(*v1.Pod) string) (victimKind, string) {
	if pod.DeletionTimestamp != nil || pod.Spec.SchedulerName != schedulingv1beta1.SchedulerName {
		return notAVictim, ""
	}
	queue, err := queueOf(pod)
	if err != nil || (p.gang != "" && gangOf(pod) == p.gang) {
		return notAVictim, ""
	}
	if queue == p.queue {
		if p.preempt && corev1helpers.PodPriority(pod) < p.priority {
			return preemptible, queue
		}
		return notAVictim, ""
	}
	if _, ok := p.spare[queue]; ok {
		return reclaimable, queue
	}
	return notAVictim, ""
}

// tally is what a dry run has taken so far from each queue, gang and disruption budget.
type tally struct {
	plan      *plan
	taken     map[string]v1.ResourceList
	fromGangs map[string]int
	budgets   *budgets
}

// newTally starts a dry run's tally; the budgets count the victims under way as taken already.
func newTally(p *plan, pdbs []*policy.PodDisruptionBudget) *tally {
	b := newBudgets(pdbs)
	b.takePods(p.evicting, 1)
	return &tally{plan: p, taken: map[string]v1.ResourceList{}, fromGangs: map[string]int{}, budgets: b}
}

// clone returns a tally that may take more without changing t.
func (t *tally) clone() *tally {
	c := &tally{plan: t.plan, taken: make(map[string]v1.ResourceList, len(t.taken)), fromGangs: make(map[string]int, len(t.fromGangs)),
		budgets: t.budgets.clone()}
	maps.Copy(c.taken, t.taken)
	maps.Copy(c.fromGangs, t.fromGangs)
	return c
}

// allows says whether v may be taken on top of what was taken: no disruption budget is exceeded,
// and a reclaimed queue keeps its share in every resource it holds above it. The resources it is
// at or below its share in are not counted: its victims may hold a little of those too, and
// counting them would keep a queue that borrowed memory from giving any back while it holds less
// cpu than its share. A victim must free some of a resource its queue holds above its share and
// the preemptor asks for: else it gives back nothing the preemptor may take back.
func (t *tally) allows(v *victim) bool {
	if !t.budgets.allows(v.all()) {
		return false
	}
	if v.kind != reclaimable {
		return true
	}
	after := quota.Add(t.taken[v.queue], v.requests)
	frees := false
	for name, s := range t.plan.spare[v.queue] {
		q := after[name]
		if q.Cmp(s) > 0 {
			return false
		}
		r, freed := t.plan.req[name], v.requests[name]
		frees = frees || (!r.IsZero() && !freed.IsZero())
	}
	return frees || quota.IsZero(t.plan.req)
}

func (t *tally) take(v *victim) {
	t.taken[v.queue] = quota.Add(t.taken[v.queue], v.requests)
	t.budgets.take(v.all(), 1)
	if v.gang != "" {
		t.fromGangs[v.gang] += len(v.pods) + len(v.others)
	}
}

func (t *tally) giveBack(v *victim) {
	t.taken[v.queue] = quota.SubtractWithNonNegativeResult(t.taken[v.queue], v.requests)
	t.budgets.take(v.all(), -1)
	if v.gang != "" {
		t.fromGangs[v.gang] -= len(v.pods) + len(v.others)
	}
}

// all returns the victim's pods, on the node evaluated and elsewhere.
func (v *victim) all() []fwk.PodInfo {
	if len(v.others) == 0 {
		return v.pods
	}
	return append(append([]fwk.PodInfo(nil), v.pods...), v.others...)
}

func requestsOf(pods []fwk.PodInfo) v1.ResourceList {
	total := v1.ResourceList{}
	for _, p := range pods {
		total = quota.Add(total, resourcehelper.PodRequests(p.GetPod(), resourcehelper.PodResourcesOptions{}))
	}
	return total
}
