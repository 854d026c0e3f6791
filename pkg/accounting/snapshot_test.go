package accounting

import (
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	quota "k8s.io/apiserver/pkg/quota/v1"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/history"
	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// A snapshot is one value for every reader until something changes; a change gives a new one, with
// the shares computed on it, that copies only the queues it touched (their usage, their ancestors'
// totals, their share).
func TestSnapshotFollowsChanges(t *testing.T) {
	a := newTestAccounting(t, []runtime.Object{util.MakeQueue("root").Obj(), util.MakeQueue("a").Obj(), util.MakeQueue("b").Obj()},
		util.MakeNode("n", "10", "10Gi"), pod("a", "a-0", "1", "n"))
	first := a.Snapshot()
	if again := a.Snapshot(); again != first {
		t.Fatal("two snapshots with nothing changed between them are different values")
	}
	if !quota.Equals(first.Queue("a").Allocated, cpu("1")) || !quota.Equals(first.Queue("root").Subtree, cpu("1")) {
		t.Fatalf("first snapshot: a holds %v, root's subtree %v", first.Queue("a").Allocated, first.Queue("root").Subtree)
	}
	a.Pods.upsert(pod("b", "b-0", "2", "n"))
	second := a.Snapshot()
	if second == first || second.Changes <= first.Changes {
		t.Fatalf("after b's pod: same value %t, changes %d after %d", second == first, second.Changes, first.Changes)
	}
	if b := second.Queue("b"); b.Deserved.Cpu().Cmp(resource.MustParse("2")) != 0 || !quota.Equals(b.Allocated, cpu("2")) {
		t.Errorf("after b's pod: b deserves %v and holds %v, want 2 and 2 with no computation to wait for", b.Deserved, b.Allocated)
	}
	// The first may carry copies of its own (a change counted after the last whole build): they are
	// shared, not copied again.
	for name, q := range second.Updated {
		if name != "b" && name != "root" && q != first.Queue(name) {
			t.Errorf("%s, whose usage and share did not change, was copied", name)
		}
	}
	if second.Queue("a") != first.Queue("a") || second.Updated["b"] == nil || second.Updated["root"] == nil {
		t.Errorf("after b's pod: a copied %t; b and root copied: %v", second.Queue("a") != first.Queue("a"), second.Updated)
	}
	if !quota.Equals(second.Queue("root").Subtree, cpu("3")) || !quota.Equals(second.Allocated, cpu("3")) {
		t.Errorf("after b's pod: root's subtree %v, all %v", second.Queue("root").Subtree, second.Allocated)
	}
	if first.Queue("b").Allocated != nil || !quota.Equals(first.Allocated, cpu("1")) {
		t.Error("a published snapshot changed")
	}
	// A computation that moves no share copies no queue.
	compute(a)
	third := a.Snapshot()
	if third == second || third.Queue("a") != second.Queue("a") || third.Queue("b") != second.Queue("b") {
		t.Errorf("after a computation that moved nothing: same value %t, a copied %t, b copied %t", third == second,
			third.Queue("a") != second.Queue("a"), third.Queue("b") != second.Queue("b"))
	}
	if a.ChangedSince(third) || !a.ChangedSince(second) {
		t.Errorf("changed since the latest: %t; since the one before: %t", a.ChangedSince(third), a.ChangedSince(second))
	}
	// The tree's totals recounted (a queue added, deleted or moved) is a change of its own: whichever
	// handler of the queue informer runs first, no snapshot built before stays current.
	a.Pods.rebuildSubtrees()
	if fourth := a.Snapshot(); fourth == third || fourth.Updated != nil {
		t.Errorf("after the tree's totals were recounted: same value %t, built whole %t", fourth == third, fourth.Updated == nil)
	}
}

// TestClaimsFollowUsageWithoutAComputation places and lets go pods of queues below and above their
// share: no step computes the shares (a placement moves no demand), and after each the snapshot's
// claims and spare, kept as the changed queues' differences, equal a whole build's.
func TestClaimsFollowUsageWithoutAComputation(t *testing.T) {
	// Of 10 cpu, a holds 6, b asks for 4 and c for 2: c deserves 2, a and b 4 each; a holds 2 above.
	kube := []runtime.Object{util.MakeNode("n", "10", "10Gi"), pod("a", "a-0", "6", "n")}
	waiting := []*v1.Pod{pod("b", "b-0", "2", ""), pod("b", "b-1", "2", ""), pod("c", "c-0", "2", "")}
	for _, p := range waiting {
		kube = append(kube, p)
	}
	a := newTestAccounting(t, []runtime.Object{util.MakeQueue("root").Obj(), util.MakeQueue("a").Obj(), util.MakeQueue("b").Obj(),
		util.MakeQueue("c").Obj()}, kube...)
	compute(a)
	before := a.readShares().computedGen
	placed := func(p *v1.Pod) *v1.Pod {
		on := p.DeepCopy()
		on.Spec.NodeName = "n"
		return on
	}
	steps := []struct {
		name string
		do   func()
	}{
		{"b-0 assumed", func() { a.Pods.Assume(placed(waiting[0])) }},
		{"c-0 assumed", func() { a.Pods.Assume(placed(waiting[2])) }},
		{"b-0 forgotten", func() { a.Pods.Forget(waiting[0]) }},
		{"c-0 bound", func() { a.Pods.upsert(placed(waiting[2])) }},
		{"b-1 bound", func() { a.Pods.upsert(placed(waiting[1])) }},
		{"a-0 terminating", func() {
			p := pod("a", "a-0", "6", "n")
			p.DeletionTimestamp = &metav1.Time{Time: time.Now()}
			a.Pods.upsert(p)
		}},
	}
	for _, s := range steps {
		s.do()
		snap := a.Snapshot()
		whole := &policy.Snapshot{}
		sh := a.readShares()
		a.Pods.mu.Lock()
		a.Pods.wholeQueues(whole, a.Store.AllQueues(), sh)
		a.Pods.mu.Unlock()
		if computed := a.readShares().computedGen; computed != before || snap.Updated == nil {
			t.Fatalf("after %s: shares computed %t, built whole %t; want neither", s.name, computed != before, snap.Updated == nil)
		}
		if !quota.Equals(snap.Claimable, whole.Claimable) || !equalLists(snap.Spare, whole.Spare) {
			t.Errorf("after %s: claimable %v, spare %v; a whole build has %v, %v", s.name, snap.Claimable, snap.Spare, whole.Claimable, whole.Spare)
		}
	}
	if snap := a.Snapshot(); !quota.Equals(snap.Claimable, quota.Add(snap.Queue("b").Claim, snap.Queue("c").Claim)) || len(snap.Spare) != 0 {
		t.Errorf("at the end: claimable %v, spare %v", snap.Claimable, snap.Spare)
	}
}

func equalLists(a, b map[string]v1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for name, l := range a {
		if !quota.Equals(l, b[name]) {
			return false
		}
	}
	return true
}

// TestSpareGrowthIsHeardWithoutAComputation: a queue above its share that takes more is heard of at
// the next snapshot, with no computation of the shares; one whose spare dips and climbs back is
// heard of again, so a pod refused on the dip is let in.
func TestSpareGrowthIsHeardWithoutAComputation(t *testing.T) {
	a, extra := aboveItsShare(t)
	// Each call says how many growths the snapshots had counted when it came.
	told := make(chan uint64, 64)
	a.Events.SpareGrown.SubscribeSignal(func() { told <- a.snapshots.latest.Load().SpareGrowths })
	base := a.Snapshot().SpareGrowths
	placed := extra.DeepCopy()
	placed.Spec.NodeName = "n"
	for i, step := range []struct {
		name   string
		do     func()
		spare  string
		growth uint64
	}{
		{"a-extra assumed", func() { a.Pods.Assume(placed) }, "2", 1},
		{"a-extra forgotten", func() { a.Pods.Forget(extra) }, "1", 1},
		{"a-extra assumed again", func() { a.Pods.Assume(placed) }, "2", 2},
	} {
		step.do()
		snap := a.Snapshot()
		if !quota.Equals(snap.Spare["a"], cpu(step.spare)) || snap.SpareGrowths != base+step.growth {
			t.Fatalf("after %s: a's spare %v, growths %d; want %s, %d", step.name, snap.Spare["a"],
				snap.SpareGrowths-base, step.spare, step.growth)
		}
		if i != 1 {
			waitTold(t, told, base+step.growth, step.name)
		}
	}
}

// aboveItsShare is an accounting on 10 cpu where queue a holds 6 and asks for 1 more (extra), and b
// asks for 6: each deserves 5, and a holds 1 above its share.
func aboveItsShare(t *testing.T) (*Accounting, *v1.Pod) {
	extra := pod("a", "a-extra", "1", "")
	a := newTestAccounting(t, []runtime.Object{util.MakeQueue("root").Obj(), util.MakeQueue("a").Obj(), util.MakeQueue("b").Obj()},
		util.MakeNode("n", "10", "10Gi"), pod("a", "a-0", "6", "n"), extra, pod("b", "b-0", "6", ""))
	compute(a)
	return a, extra
}

// waitTold waits for an Events.SpareGrown call that came once the snapshots had counted growths.
func waitTold(t *testing.T, told <-chan uint64, growths uint64, after string) {
	t.Helper()
	timeout := time.After(wait.ForeverTestTimeout)
	for {
		select {
		case n := <-told:
			if n >= growths {
				return
			}
		case <-timeout:
			t.Fatalf("after %s: no Events.SpareGrown call after growth %d", after, growths)
		}
	}
}

// TestPlacementsMoveTheSharesWhereTheyCount: a pod placed or let go moves no demand, and so not the
// shares, but where the usage history charges each pod on entry (and moves the shares), and in a
// Suspended queue, which asks for what it holds.
func TestPlacementsMoveTheSharesWhereTheyCount(t *testing.T) {
	charged := Config{History: history.Settings{HalfLife: time.Hour, EntryCharge: time.Minute, Factor: 1}}
	for _, tt := range []struct {
		name  string
		cfg   Config
		queue *schedulingv1beta1.Queue
		moves bool
	}{
		{"no usage history", Config{}, util.MakeQueue("a").Obj(), false},
		{"history kept, not moving the shares", Config{History: history.Settings{HalfLife: time.Hour, EntryCharge: time.Minute}}, util.MakeQueue("a").Obj(), false},
		{"history moving the shares, no entry charge", Config{History: history.Settings{HalfLife: time.Hour, Factor: 1}}, util.MakeQueue("a").Obj(), false},
		{"entries charged and moving the shares", charged, util.MakeQueue("a").Obj(), true},
		{"a Suspended queue", Config{}, util.MakeQueue("a").State(schedulingv1beta1.QueueStateSuspended).Obj(), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := pod("a", "p", "1", "")
			a := newTestAccountingWith(t, tt.cfg, []runtime.Object{util.MakeQueue("root").Obj(), tt.queue}, util.MakeNode("n", "10", "10Gi"), p)
			placed := p.DeepCopy()
			placed.Spec.NodeName = "n"
			for _, step := range []struct {
				name string
				do   func()
			}{
				{"assumed", func() { a.Pods.Assume(placed) }},
				{"forgotten", func() { a.Pods.Forget(p) }},
				{"bound", func() { a.Pods.upsert(placed.DeepCopy()) }},
			} {
				before := a.shares.movedGen.Load()
				step.do()
				if moved := a.shares.movedGen.Load() != before; moved != tt.moves {
					t.Errorf("%s: shares moved %t, want %t", step.name, moved, tt.moves)
				}
			}
		})
	}
}

// TestSpareGrowthListenersRunOffTheBuilder: a snapshot is built by whoever reads it first, which may
// hold a lock the listeners take (a PreEnqueue plugin runs under the scheduling queue's lock, and
// Reclaim's listener activates pods, which takes it): the build returns while the listener waits
// for the lock, and the listener runs once it is free.
func TestSpareGrowthListenersRunOffTheBuilder(t *testing.T) {
	a, extra := aboveItsShare(t)
	var queueLock sync.Mutex
	told := make(chan uint64, 64)
	a.Events.SpareGrown.SubscribeSignal(func() {
		queueLock.Lock()
		defer queueLock.Unlock()
		told <- a.snapshots.latest.Load().SpareGrowths
	})
	base := a.Snapshot().SpareGrowths
	placed := extra.DeepCopy()
	placed.Spec.NodeName = "n"
	a.Pods.Assume(placed)
	built := make(chan uint64, 1)
	queueLock.Lock()
	go func() { built <- a.Snapshot().SpareGrowths }()
	select {
	case n := <-built:
		if n != base+1 {
			t.Errorf("the build counted %d growths, want 1", n-base)
		}
	case <-time.After(wait.ForeverTestTimeout):
		t.Fatal("the build waits for a listener that waits for the lock its reader holds")
	}
	queueLock.Unlock()
	waitTold(t, told, base+1, "the lock was let go")
}

// Builds after changes of usage and computations of the shares copy only the queues they moved,
// fold the copies into the queues once more than foldAt were copied, and stay equal, queue by
// queue, to a whole build. Of 100 cpu, the queues ask for 1 each, then 2 one after another: past
// 100, every queue's share moves with the computations, most of them with no change of their own.
func TestSnapshotsBuiltFromChangesEqualAWholeBuild(t *testing.T) {
	const queues = foldAt + 10
	objs := []runtime.Object{util.MakeQueue("root").Obj()}
	kube := []runtime.Object{util.MakeNode("n", "100", "100Gi")}
	for i := range queues {
		name := fmt.Sprintf("q%02d", i)
		objs = append(objs, util.MakeQueue(name).Obj())
		kube = append(kube, pod(name, name+"-0", "1", ""))
	}
	a := newTestAccounting(t, objs, kube...)
	folded := false
	for i := range queues {
		name := fmt.Sprintf("q%02d", i)
		a.Pods.upsert(pod(name, name+"-0", "1", "n"))
		a.Pods.upsert(pod(name, name+"-1", "1", ""))
		if i%7 == 0 {
			compute(a)
		}
		snap := a.Snapshot()
		folded = folded || snap.Updated == nil
		whole := &policy.Snapshot{}
		sh := a.readShares()
		a.Pods.mu.Lock()
		a.Pods.wholeQueues(whole, a.Store.AllQueues(), sh)
		a.Pods.mu.Unlock()
		if len(snap.Updated) > foldAt {
			t.Fatalf("after %s's pods: %d queues copied, more than %d", name, len(snap.Updated), foldAt)
		}
		for q, want := range whole.Queues {
			if got := snap.Queue(q); !reflect.DeepEqual(got, want) {
				t.Fatalf("after %s's pods: %s is %+v, a whole build has %+v", name, q, got, want)
			}
		}
		if !quota.Equals(snap.Claimable, whole.Claimable) || !equalLists(snap.Spare, whole.Spare) {
			t.Fatalf("after %s's pods: claimable %v, spare %v; a whole build has %v, %v", name, snap.Claimable, snap.Spare, whole.Claimable, whole.Spare)
		}
	}
	if !folded {
		t.Errorf("%d queues changed, and the copies were never folded", queues)
	}
}
