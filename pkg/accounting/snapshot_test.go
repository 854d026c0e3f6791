package accounting

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	quota "k8s.io/apiserver/pkg/quota/v1"

	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// A snapshot is one value for every reader until something changes; a change of usage gives a new
// one that copies only the queues it touched (and their ancestors' totals), and says that the shares
// do not include it until they are recomputed; a computation gives a whole new one.
func TestSnapshotFollowsChanges(t *testing.T) {
	a := newTestAccounting(t, []runtime.Object{util.MakeQueue("root").Obj(), util.MakeQueue("a").Obj(), util.MakeQueue("b").Obj()},
		util.MakeNode("n", "10", "10Gi"), pod("a", "a-0", "1", "n"))
	first := a.Snapshot()
	if again := a.Snapshot(); again != first {
		t.Fatal("two snapshots with nothing changed between them are different values")
	}
	if first.Stale() || !quota.Equals(first.Queue("a").Allocated, cpu("1")) || !quota.Equals(first.Queue("root").Subtree, cpu("1")) {
		t.Fatalf("first snapshot: stale %t, a holds %v, root's subtree %v", first.Stale(), first.Queue("a").Allocated, first.Queue("root").Subtree)
	}
	a.usage.upsert(pod("b", "b-0", "2", "n"))
	second := a.Snapshot()
	if second == first || !second.Stale() || second.Changes <= first.Changes {
		t.Fatalf("after b's pod: same value %t, stale %t, changes %d after %d", second == first, second.Stale(), second.Changes, first.Changes)
	}
	if second.Queue("a") != first.Queue("a") || len(second.Updated) != 2 {
		t.Errorf("a queue whose usage did not change was copied, or more than b and root: %v", second.Updated)
	}
	if !quota.Equals(second.Queue("b").Allocated, cpu("2")) || !quota.Equals(second.Queue("root").Subtree, cpu("3")) ||
		!quota.Equals(second.Allocated, cpu("3")) {
		t.Errorf("after b's pod: b holds %v, root's subtree %v, all %v", second.Queue("b").Allocated, second.Queue("root").Subtree, second.Allocated)
	}
	if first.Queue("b").Allocated != nil || !quota.Equals(first.Allocated, cpu("1")) {
		t.Error("a published snapshot changed")
	}
	a.recomputeShares()
	third := a.Snapshot()
	if third.Stale() || third.Queue("a") == second.Queue("a") || third.Queue("b").Deserved == nil {
		t.Errorf("after a computation: stale %t, a reused %t, b deserves %v", third.Stale(), third.Queue("a") == second.Queue("a"), third.Queue("b").Deserved)
	}
	if a.ChangedSince(third) || !a.SharesCaughtUp(second) {
		t.Errorf("changed since the latest: %t; shares caught up with the one before: %t", a.ChangedSince(third), a.SharesCaughtUp(second))
	}
	// The tree's totals recounted (a queue added, deleted or moved) is a change of its own: whichever
	// handler of the queue informer runs first, no snapshot built before stays current.
	a.usage.rebuildSubtrees()
	if fourth := a.Snapshot(); fourth == third || fourth.Updated != nil {
		t.Errorf("after the tree's totals were recounted: same value %t, built whole %t", fourth == third, fourth.Updated == nil)
	}
}
