package accounting

import (
	"math"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/queue-scheduler/queue-scheduler/pkg/history"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// The ledger resumes a queue from its checkpoint, counts what its pods hold for the time they hold
// it, charges a pod's entry, and with a factor moves the shares away from the queue that used more.
func TestLedgerRemembersWhatQueuesUsed(t *testing.T) {
	start := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	clk := testingclock.NewFakeClock(start)
	settings := history.Settings{HalfLife: time.Hour, EntryCharge: time.Minute, Factor: 1}
	queues := []runtime.Object{
		util.MakeQueue("root").Obj(),
		util.MakeQueue("a").Used(map[v1.ResourceName]string{v1.ResourceCPU: "3600"}, start.Add(-time.Hour)).Obj(),
		util.MakeQueue("b").Obj(),
	}
	kube := []runtime.Object{util.MakeNode("n", "10", "10Gi"), pod("a", "a-running", "2", "n"),
		pod("a", "a-wants", "8", ""), pod("b", "b-wants", "1", ""), pod("b", "b-wants-more", "8", "")}
	a := newTestAccountingWith(t, Config{Clock: clk, History: settings}, queues, kube...)
	cpuSeconds := func(queue string) float64 {
		t.Helper()
		u, ok := a.History.Remembered(queue)
		if !ok {
			t.Fatalf("no usage kept for %s", queue)
		}
		return u.ResourceSeconds[v1.ResourceCPU]
	}
	// Checkpointed an hour ago at 3,600 cpu-seconds: half of it now, and the 2 cpus a holds counted
	// as held since the checkpoint. The running pod was bound before the ledger saw it: no entry
	// charge.
	resumed := 1800 + 2*0.5*3600/math.Ln2
	if got := cpuSeconds("a"); math.Abs(got-resumed) > 1e-6 {
		t.Errorf("a resumed at %v cpu-seconds, want %v (3600 checkpointed one half-life ago, 2 cpus held since)", got, resumed)
	}
	clk.Step(30 * time.Minute)
	compute(a)
	want := resumed*math.Sqrt(0.5) + 2*(1-math.Sqrt(0.5))*3600/math.Ln2
	if got := cpuSeconds("a"); math.Abs(got-want) > 1e-6*want {
		t.Errorf("after 2 cpus for half an hour a used %v cpu-seconds, want %v", got, want)
	}
	if got := cpuSeconds("b"); got != 0 {
		t.Errorf("b used %v cpu-seconds without a pod holding anything", got)
	}
	a.Pods.Assume(pod("b", "b-wants", "1", ""))
	compute(a)
	if got := cpuSeconds("b"); math.Abs(got-60) > 1e-6 {
		t.Errorf("b's first pod holding 1 cpu charged %v cpu-seconds, want 60 (a minute's entry charge)", got)
	}
	// Equal weights, demand beyond the 10 cpus: the 10 split by usage, a getting the smaller part.
	da, db := a.Deserved("a")[v1.ResourceCPU], a.Deserved("b")[v1.ResourceCPU]
	if da.Cmp(db) >= 0 || a.EffectiveWeights("a")[v1.ResourceCPU] >= 1 || a.EffectiveWeights("b")[v1.ResourceCPU] <= 1 {
		t.Errorf("a deserves %s and b %s, effective weights %v and %v: want a, which used more, below b",
			da.String(), db.String(), a.EffectiveWeights("a"), a.EffectiveWeights("b"))
	}
	a.Pods.Forget(pod("b", "b-wants", "1", ""))
	compute(a)
	clk.Step(time.Hour)
	compute(a)
	// The unreserved pod's charge went with it: what is left is the moment it held its cpu.
	if got := cpuSeconds("b"); got > 1 {
		t.Errorf("b used %v cpu-seconds after its only pod was unreserved, want its charge taken back", got)
	}
}

// Without a history, nothing is kept and the shares split by weight.
func TestNoLedgerWithoutHalfLife(t *testing.T) {
	a := newTestAccounting(t, []runtime.Object{util.MakeQueue("root").Obj(), util.MakeQueue("a").Obj()},
		util.MakeNode("n", "10", "10Gi"), pod("a", "p", "1", "n"))
	if u, ok := a.History.Remembered("a"); ok {
		t.Errorf("usage %v kept without a half-life", u)
	}
	if w := a.EffectiveWeights("a"); w != nil {
		t.Errorf("effective weights %v without a history", w)
	}
}

// A pod placed moves no demand, and so no computation of the shares: the ledger counts what it holds
// from the snapshot that first holds it all the same, with a history that only remembers (factor 0,
// no entry charge).
func TestLedgerCountsPlacementsWithNoComputation(t *testing.T) {
	start := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	clk := testingclock.NewFakeClock(start)
	waiting := pod("a", "a-0", "2", "")
	a := newTestAccountingWith(t, Config{Clock: clk, History: history.Settings{HalfLife: time.Hour}},
		[]runtime.Object{util.MakeQueue("root").Obj(), util.MakeQueue("a").Obj()}, util.MakeNode("n", "10", "10Gi"), waiting)
	if used, ok := a.History.Own("a", clk.Now()); !ok || used.ResourceSeconds[v1.ResourceCPU] != 0 {
		t.Fatalf("before the placement: a used %v (kept %t), want nothing", used.ResourceSeconds, ok)
	}
	computed := a.readShares().computedGen
	placed := waiting.DeepCopy()
	placed.Spec.NodeName = "n"
	a.Pods.upsert(placed)
	a.Snapshot()
	if a.readShares().computedGen != computed {
		t.Fatal("a placement computed the shares")
	}
	clk.Step(30 * time.Minute)
	want := 2 * (1 - math.Sqrt(0.5)) * 3600 / math.Ln2 // 2 cpus held for half a half-life
	if used, _ := a.History.Own("a", clk.Now()); math.Abs(used.ResourceSeconds[v1.ResourceCPU]-want) > 1e-6*want {
		t.Errorf("after 2 cpus held for half an hour: a used %v cpu-seconds, want %v", used.ResourceSeconds[v1.ResourceCPU], want)
	}
}
