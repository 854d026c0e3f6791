package accounting

import (
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	quota "k8s.io/apiserver/pkg/quota/v1"

	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// Computations after changes of usage only keep the tree and set the demand of the queues whose
// usage changed: after pods come, are placed and go, in a leaf and in a parent's child, each
// computation gives what a tree built anew from the same reading gives, and the leaves' demand
// follows.
func TestSharesOnTheKeptTreeFollowUsage(t *testing.T) {
	// Of 12 cpu, a asks for 10 and p.b for 2.
	a := newTestAccounting(t, []runtime.Object{util.MakeQueue("root").Obj(), util.MakeQueue("a").Obj(),
		util.MakeQueue("p").Obj(), util.MakeQueue("b").Parent("p").Obj()},
		util.MakeNode("n", "12", "12Gi"), pod("a", "a-0", "10", ""), pod("b", "b-0", "2", ""))
	compute(a)
	built := a.shares.tree
	agrees := func(step string, wantA, wantB string) {
		t.Helper()
		compute(a)
		if a.shares.tree != built {
			t.Fatalf("%s: the tree was built anew on a change of usage", step)
		}
		anew, _, usage := a.SharesIf(nil, nil)
		for _, q := range []string{"a", "p", "b"} {
			if got := a.Deserved(q); !quota.Equals(got, anew[q]) {
				t.Errorf("%s: %s deserves %v on the kept tree, %v on one built anew", step, q, got, anew[q])
			}
			if _, leaf := a.shares.leafDemand[q]; leaf != (q != "p") {
				t.Errorf("%s: %s taken as a leaf: %t", step, q, leaf)
			}
		}
		for q, want := range map[string]string{"a": wantA, "b": wantB} {
			if got, demand := a.Deserved(q), sumOf(usage[q].Allocated, usage[q].Pending); got.Cpu().Cmp(resource.MustParse(want)) != 0 ||
				!quota.Equals(a.shares.leafDemand[q], demand) {
				t.Errorf("%s: %s deserves %v, want %s; its demand %v, its usage asks for %v", step, q, got, want, a.shares.leafDemand[q], demand)
			}
		}
	}
	agrees("at the start", "10", "2")
	a.Pods.upsert(pod("b", "b-1", "8", ""))
	agrees("b asks for 8 more", "6", "6")
	placed := pod("b", "b-1", "8", "n")
	a.Pods.upsert(placed)
	agrees("b's pod placed", "6", "6")
	a.Pods.remove(placed)
	agrees("b's pod gone", "10", "2")
	a.Pods.remove(pod("a", "a-0", "10", ""))
	agrees("a's only pod gone", "0", "2")
}

// A change of the queues builds the tree anew: a queue that was not there is shared.
func TestSharesBuildTheTreeAnewOnAQueueChange(t *testing.T) {
	a := newTestAccounting(t, []runtime.Object{util.MakeQueue("root").Obj(), util.MakeQueue("a").Obj()},
		util.MakeNode("n", "12", "12Gi"), pod("a", "a-0", "12", ""), pod("c", "c-0", "12", ""))
	compute(a)
	if got := a.Deserved("a"); got.Cpu().Cmp(resource.MustParse("12")) != 0 {
		t.Fatalf("a alone deserves %v, want 12", got)
	}
	added := util.MakeQueue("c").Obj()
	if err := a.Store.QueueInformer().GetStore().Add(added); err != nil {
		t.Fatal(err)
	}
	a.shares.markDirty()
	compute(a)
	for _, q := range []string{"a", "c"} {
		if got, want := a.Deserved(q), resource.MustParse("6"); got.Cpu().Cmp(want) != 0 {
			t.Errorf("after c was added: %s deserves %v, want %v", q, got, want)
		}
	}
}

// A computation that takes a queue's new demand after a build already copied the queue's usage (the
// pod came after that build read the counters, so it computed nothing) copies the queue again with
// its demand, though its share stays: the snapshot after it equals a whole build.
func TestADemandTakenAfterItsCopyReachesTheSnapshot(t *testing.T) {
	// a is guaranteed 8 of 10 cpu: it deserves 8 whatever it asks for, and claims what it asks for.
	a := newTestAccounting(t, []runtime.Object{util.MakeQueue("root").Obj(),
		util.MakeQueue("a").Guarantee(map[v1.ResourceName]string{v1.ResourceCPU: "8"}).Obj(), util.MakeQueue("b").Obj()},
		util.MakeNode("n", "10", "10Gi"), pod("a", "a-0", "2", ""), pod("b", "b-0", "2", ""))
	compute(a)
	deserved := a.readShares().deserved["a"]
	a.Pods.upsert(pod("a", "a-1", "3", ""))
	// The build that read the counters before the pod came: it copies a's usage, computes nothing.
	a.shares.mu.Lock()
	a.shares.computedGen = a.shares.counters().moved
	a.shares.mu.Unlock()
	if claim := a.Snapshot().Queue("a").Claim.Cpu(); claim.Cmp(resource.MustParse("2")) != 0 {
		t.Fatalf("the build that computed nothing: a claims %v, want the 2 cpu it asked for before", claim)
	}
	compute(a)
	snap := a.Snapshot()
	sh := a.readShares()
	if !sameList(sh.deserved["a"], deserved) {
		t.Fatalf("a's share moved from %v to %v: the case is a demand that moves no share", deserved, sh.deserved["a"])
	}
	whole := &policy.Snapshot{}
	a.Pods.mu.Lock()
	a.Pods.wholeQueues(whole, a.Store.AllQueues(), sh)
	a.Pods.mu.Unlock()
	for q, want := range whole.Queues {
		if got := snap.Queue(q); !reflect.DeepEqual(got, want) {
			t.Errorf("%s is %+v, a whole build has %+v", q, got, want)
		}
	}
}
