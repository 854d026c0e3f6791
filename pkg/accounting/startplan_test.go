package accounting

import (
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/timeline"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// member is a pending pod of PodGroup g in queue a.
func member(name, cpu string, gated bool) *v1.Pod {
	w := util.MakePod("ns", name).Label(schedulingv1beta1.QueueLabel, "a").Label(schedulingv1beta1.PodGroupLabel, "g").
		UID(name).Req(map[v1.ResourceName]string{v1.ResourceCPU: cpu})
	if gated {
		w = w.SchedulingGates([]string{"example.com/wait"})
	}
	return w.Obj()
}

func names(pods []*v1.Pod) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = p.Name
	}
	return out
}

// A gang waits for room while fewer than minMember of its members hold some: its members placed and
// waiting at Permit are planned with the largest of the rest; a member behind scheduling gates
// waits for its gates, not for room, and a gang that only such members keep short does not wait.
func TestWaitingGangs(t *testing.T) {
	queues := func() []runtime.Object {
		return []runtime.Object{util.MakeQueue("root").Obj(), util.MakeQueue("a").Obj(),
			util.MakePodGroup("ns", "g").MinMember(2).Queue("a").Obj()}
	}
	node := util.MakeNode("n", "16", "16Gi")

	gated := newTestAccounting(t, queues(), node, member("g-0", "4", false), member("g-1", "2", true))
	if got := gated.WaitingGangs(5, nil); len(got) != 0 {
		t.Errorf("a gang kept short by a gated member: waiting %+v, want none", got)
	}

	small, large, third := member("g-0", "2", false), member("g-1", "4", false), member("g-2", "1", false)
	a := newTestAccounting(t, queues(), node, small, large, third)
	want := func(step string, members, placing []string) {
		t.Helper()
		got := a.WaitingGangs(5, nil)
		switch {
		case members == nil && len(got) != 0:
			t.Errorf("%s: waiting %v, want none", step, names(got[0].Members))
		case members == nil:
		case len(got) != 1 || !slices.Equal(names(got[0].Members), members) || !slices.Equal(names(got[0].Placing), placing):
			t.Errorf("%s: waiting %+v, want members %v placing %v", step, got, members, placing)
		}
	}
	want("none placed", []string{"g-1", "g-0"}, []string{})
	small.Spec.NodeName = "n"
	a.Pods.Assume(small)
	want("one waits at Permit", []string{"g-0", "g-1"}, []string{"g-0"})
	a.Pods.Forget(small)
	want("the one let go at Unreserve", []string{"g-1", "g-0"}, []string{})
	a.Pods.Assume(small)
	large.Spec.NodeName = "n"
	a.Pods.Assume(large)
	want("minMember placed", nil, nil)
}

// The reservations go round the queues: each queue's first waiting gang before any queue's second,
// in the scheduler's order.
func TestWaitingGangsTakeEachQueuesFirst(t *testing.T) {
	objs := []runtime.Object{util.MakeQueue("root").Obj(), util.MakeQueue("a").Obj(), util.MakeQueue("b").Obj()}
	var kube []runtime.Object
	for _, g := range []struct{ name, queue string }{{"a-1", "a"}, {"a-2", "a"}, {"a-3", "a"}, {"b-1", "b"}} {
		pg := util.MakePodGroup("ns", g.name).MinMember(1).Queue(g.queue).Obj()
		pg.CreationTimestamp = metav1.NewTime(time.Date(2026, 11, 27, 0, 0, len(kube), 0, time.UTC))
		objs = append(objs, pg)
		kube = append(kube, util.MakePod("ns", g.name+"-0").Label(schedulingv1beta1.QueueLabel, g.queue).
			Label(schedulingv1beta1.PodGroupLabel, g.name).UID(g.name).Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj())
	}
	a := newTestAccounting(t, objs, append(kube, util.MakeNode("n", "16", "16Gi"))...)
	var got []string
	for _, g := range a.WaitingGangs(3, nil) {
		got = append(got, g.Key)
	}
	if want := []string{"ns/a-1", "ns/a-2", "ns/b-1"}; !slices.Equal(got, want) {
		t.Errorf("waiting gangs %v, want %v", got, want)
	}
	got = nil
	for _, g := range a.WaitingGangs(3, func(key string) bool { return key == "ns/a-1" }) {
		got = append(got, g.Key)
	}
	if want := []string{"ns/a-2", "ns/a-3", "ns/b-1"}; !slices.Equal(got, want) {
		t.Errorf("waiting gangs, a-1 set aside: %v, want %v", got, want)
	}
}

// A gang whose reservation lapsed, or whose lapse is over, is a change the condition writer hears of.
func TestLapsesAreChanges(t *testing.T) {
	at := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	lapsed := &timeline.Plan{At: at, Lapsed: []timeline.Lapse{{Gang: "ns/g", Since: at, Until: at.Add(time.Minute)}}}
	none := &timeline.Plan{At: at}
	for _, c := range []struct {
		name       string
		last, next *timeline.Plan
	}{{"set aside", none, lapsed}, {"back", lapsed, none}} {
		if got := changedReservations(c.last, c.next); !slices.Equal(got, []string{"ns/g"}) {
			t.Errorf("%s: changed %v, want [ns/g]", c.name, got)
		}
	}
	if got := changedReservations(lapsed, lapsed); len(got) != 0 {
		t.Errorf("still set aside: changed %v, want none", got)
	}
}

// The claim a reservation starting later keeps is its queue's, at most what the queue can claim: a
// reservation larger than the claim frees no more of it, and one that is due frees none.
func TestBackfillClaimIsTheQueuesAtMost(t *testing.T) {
	a := newTestAccounting(t, []runtime.Object{util.MakeQueue("root").Obj(), util.MakeQueue("a").Obj(), util.MakeQueue("b").Obj(),
		util.MakePodGroup("ns", "g").MinMember(2).Queue("a").Obj()},
		util.MakeNode("n", "32", "64Gi"), member("g-0", "8", false), member("g-1", "8", false))
	snap := a.Snapshot()
	if claim := snap.Queue("a").Deserved.Cpu(); claim.Cmp(resource.MustParse("16")) != 0 {
		t.Fatalf("queue a deserves %s, want its demand, 16", claim)
	}
	reserve := func(start time.Time, milli int64) {
		a.StartPlans.Publish(&timeline.Plan{Dims: timeline.Dims(nil), At: time.Now(), Reservations: []timeline.Reservation{{
			Gang: "ns/g", Start: start, Nodes: []timeline.Share{{Node: "n", Amount: timeline.Vector{milli, 0, 2}}}}}})
	}
	reserve(time.Now().Add(time.Hour), 24000)
	if got := a.backfillClaim(snap); !got.Cpu().Equal(resource.MustParse("16")) {
		t.Errorf("a reservation of 24 cpu for a queue that claims 16: %v, want 16 cpu", got)
	}
	reserve(time.Now().Add(-time.Second), 16000)
	if got := a.backfillClaim(snap); got != nil {
		t.Errorf("a reservation that is due: %v, want none", got)
	}
}

// With no planner, no reservation is held; with one, none is known until it publishes its first
// plan, so that a restarted scheduler does not say its gangs' reservations were let go.
func TestStartPlansKnown(t *testing.T) {
	plans := NewStartPlans(&Events{})
	if !plans.Known() {
		t.Error("no planner: the reservations, none, are not known")
	}
	plans.Expect()
	if plans.Known() {
		t.Error("a planner that has not planned yet: the reservations are known")
	}
	plans.Publish(&timeline.Plan{})
	if !plans.Known() {
		t.Error("a plan published: the reservations are not known")
	}
}
