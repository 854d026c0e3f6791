package accounting

import (
	"reflect"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/utils/ptr"

	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// TestAssumedPodStaysCounted follows one pod through the updates a scheduling cycle and its binding
// bring, and checks after each step what its queue counts as allocated.
func TestAssumedPodStaysCounted(t *testing.T) {
	nominated := func(p *v1.Pod) { p.Status.NominatedNodeName = "n" }
	conditioned := func(p *v1.Pod) {
		p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionFalse})
	}
	labelled := func(p *v1.Pod) { p.Labels["extra"] = "x" }
	bound := func(p *v1.Pod) { p.Spec.NodeName = "n" }
	type step struct {
		name string
		do   func(a *Accounting, p *v1.Pod)
		want string // allocated cpu of queue a afterwards, with another bound pod of 1 cpu
	}
	update := func(change func(*v1.Pod)) func(*Accounting, *v1.Pod) {
		return func(a *Accounting, p *v1.Pod) {
			change(p)
			a.Pods.upsert(p.DeepCopy())
		}
	}
	// The scheduler assumes its own copy of the pod, with the node set.
	assume := func(a *Accounting, p *v1.Pod) {
		assumed := p.DeepCopy()
		assumed.Spec.NodeName = "n"
		a.Pods.Assume(assumed)
	}
	forget := func(a *Accounting, p *v1.Pod) { a.Pods.Forget(p) }
	remove := func(a *Accounting, p *v1.Pod) { a.Pods.remove(p.DeepCopy()) }
	tests := []struct {
		name  string
		steps []step
	}{
		{"unrelated updates keep the assumption", []step{
			{"assume", assume, "3"},
			{"nominatedNodeName", update(nominated), "3"},
			{"condition", update(conditioned), "3"},
			{"label", update(labelled), "3"},
			{"forget", forget, "1"},
			{"forget again", forget, "1"},
			{"update after forget", update(labelled), "1"},
		}},
		{"forgotten before any update", []step{
			{"assume", assume, "3"},
			{"forget", forget, "1"},
			{"assume again", assume, "3"},
			{"forget again", forget, "1"},
			{"forget a third time", forget, "1"},
			{"update after forget", update(labelled), "1"},
		}},
		{"binding confirms it once", []step{
			{"assume", assume, "3"},
			{"nominatedNodeName", update(nominated), "3"},
			{"bound", update(bound), "3"},
			{"late forget", forget, "3"},
			{"delete", remove, "1"},
			{"delete again", remove, "1"},
		}},
		{"deletion releases it once", []step{
			{"assume", assume, "3"},
			{"delete", remove, "1"},
			{"forget after delete", forget, "1"},
		}},
		{"assumed before the informer delivered it", []step{
			{"assume", assume, "3"},
			{"informer add", update(nominated), "3"},
			{"forget", forget, "1"},
			{"informer update", update(labelled), "1"},
		}},
		{"assumed, never delivered, forgotten", []step{
			{"assume", assume, "3"},
			{"forget", forget, "1"},
			{"forget again", forget, "1"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newTestAccounting(t, []runtime.Object{util.MakeQueue("root").Obj(), util.MakeQueue("a").Obj()},
				util.MakeNode("n", "10", "10Gi"))
			// Another bound pod keeps the queue counted, so that a release done twice shows.
			a.Pods.upsert(pod("a", "other", "1", "n"))
			p := pod("a", "p", "2", "")
			if informedFirst(tt.name) {
				a.Pods.upsert(p.DeepCopy())
			}
			var freed []RoomFreed
			a.Events.RoomFreed.Subscribe(func(f RoomFreed) { freed = append(freed, f) })
			held, deleted := false, false // whether p holds room, as the steps want; was deleted
			compute(a)
			for _, s := range tt.steps {
				a.Snapshot()
				before, computed := len(freed), a.readShares().computedGen
				s.do(a, p)
				// Room is freed exactly when p stops holding it, once.
				if wantFreed := held && s.want == "1"; (len(freed) > before) != wantFreed || len(freed) > before+1 {
					t.Fatalf("after %s: %d RoomFreed, want one only if p held room and no longer does (%t)", s.name, len(freed)-before, wantFreed)
				}
				held = s.want == "3"
				// Placing a counted pod or letting it go moves no demand: the snapshot after it
				// computes no shares, until the pod is deleted.
				deleted = deleted || strings.HasPrefix(s.name, "delete")
				if a.Snapshot(); a.readShares().computedGen != computed && !deleted && informedFirst(tt.name) {
					t.Fatalf("after %s: the shares were computed again", s.name)
				}
				if got := allocatedCPU(a, "a"); got != s.want {
					t.Fatalf("after %s: allocated %s, want %s", s.name, got, s.want)
				}
				wantBound := 1
				if s.want == "3" {
					wantBound = 2
				}
				if got := a.Pods.Usage("a").Bound; got != wantBound {
					t.Fatalf("after %s: %d bound, want %d", s.name, got, wantBound)
				}
			}
			if total := a.Snapshot().Allocated; tt.steps[len(tt.steps)-1].want == "1" && total.Cpu().String() != "1" {
				t.Errorf("cluster total after the last step: %s, want 1", total.Cpu())
			}
		})
	}
}

// informedFirst says whether the informer delivers the pod before the case's first step.
func informedFirst(name string) bool {
	return name != "assumed before the informer delivered it" && name != "assumed, never delivered, forgotten"
}

// TestQueueResolvedOnce checks that a counted pod keeps the queue it was first counted under when
// what named it changes, and that every reader gets that queue.
func TestQueueResolvedOnce(t *testing.T) {
	ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", Annotations: map[string]string{"scheduling.queue-scheduler.io/queue": "a"}}}
	a := newTestAccounting(t, []runtime.Object{util.MakeQueue("root").Obj(), util.MakeQueue("a").Obj(), util.MakeQueue("b").Obj()}, ns)
	p := util.MakePod("ns", "p").UID("p").Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()
	p.Spec.NodeName = "n"
	a.Pods.upsert(p.DeepCopy())
	// A label the pod did not have when it was counted does not move it.
	p.Labels = map[string]string{"scheduling.queue-scheduler.io/queue": "b"}
	a.Pods.upsert(p.DeepCopy())
	if got, err := a.QueueOf(p); err != nil || got != "a" {
		t.Errorf("QueueOf: got %q, %v; want a", got, err)
	}
	if got := allocatedCPU(a, "a"); got != "1" {
		t.Errorf("allocated of a: %s, want 1", got)
	}
	if got := a.Pods.Usage("b").Pods; got != 0 {
		t.Errorf("pods of b: %d, want 0", got)
	}
	// A pod not counted yet is resolved as it stands.
	fresh := p.DeepCopy()
	fresh.UID = "fresh"
	if got, err := a.QueueOf(fresh); err != nil || got != "b" {
		t.Errorf("QueueOf of an uncounted pod: got %q, %v; want b", got, err)
	}
}

// TestSubtreeTotals checks the running totals of each queue and the queues below it as pods come
// and go and a queue moves under another parent.
func TestSubtreeTotals(t *testing.T) {
	a := newTestAccounting(t, []runtime.Object{util.MakeQueue("root").Obj(), util.MakeQueue("p").Obj(),
		util.MakeQueue("c").Parent("p").Obj(), util.MakeQueue("other").Obj()}, util.MakeNode("n", "10", "10Gi"))
	subtree := func(name string) string {
		total := a.subtreeAllocated(name)
		return total.Cpu().String()
	}
	bound, pending := pod("c", "bound", "2", "n"), pod("c", "pending", "3", "")
	a.Pods.upsert(bound)
	a.Pods.upsert(pending)
	a.Pods.upsert(pod("other", "elsewhere", "1", "n"))
	for name, want := range map[string]string{"c": "2", "p": "2", "root": "3", "other": "1"} {
		if got := subtree(name); got != want {
			t.Errorf("subtree of %s: %s, want %s", name, got, want)
		}
	}
	moved := util.MakeQueue("c").Obj()
	if err := a.Store.QueueInformer().GetIndexer().Update(moved); err != nil {
		t.Fatal(err)
	}
	a.Pods.rebuildSubtrees()
	a.Pods.remove(bound)
	a.Pods.Assume(pending)
	for name, want := range map[string]string{"c": "3", "p": "0", "root": "4"} {
		if got := subtree(name); got != want {
			t.Errorf("after the move: subtree of %s: %s, want %s", name, got, want)
		}
	}
}

// TestLeavingShowsInTheSnapshotAtOnce checks that whoever sees a pod go sees what the shares derive
// from usage move with it: a victim terminating leaves the reclaimable spare at once (it is never
// counted both as under way and as spare), with no computation of the shares, as the demand is
// unchanged; the deletion moves the demand, and the next snapshot's shares follow it.
func TestLeavingShowsInTheSnapshotAtOnce(t *testing.T) {
	// a holds 6 and b asks for 6 of 10: each deserves 5, and a holds 1 above its share.
	victim := pod("a", "victim", "2", "n")
	a := newTestAccounting(t, []runtime.Object{util.MakeQueue("root").Obj(), util.MakeQueue("a").Obj(), util.MakeQueue("b").Obj()},
		util.MakeNode("n", "10", "10Gi"), victim, pod("a", "other", "4", "n"), pod("b", "asking", "6", ""))
	snap := a.Snapshot()
	computed := a.readShares().computedGen
	if a.Pods.Leaving(victim) || !quota.Equals(snap.Spare["a"], cpu("1")) || !quota.Equals(snap.Claimable, cpu("5")) {
		t.Fatalf("before the eviction: leaving %t, spare %v, claimable %v; want a 1 above its share, b claiming 5",
			a.Pods.Leaving(victim), snap.Spare, snap.Claimable)
	}
	terminating := victim.DeepCopy()
	terminating.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	a.Pods.upsert(terminating)
	snap = a.Snapshot()
	if !a.Pods.Leaving(victim) || a.readShares().computedGen != computed || len(snap.Spare) != 0 || len(a.ReclaimableSpare("b")) != 0 {
		t.Errorf("after the eviction: leaving %t, shares computed again %t, spare %v; want leaving, not computed, no spare",
			a.Pods.Leaving(victim), a.readShares().computedGen != computed, snap.Spare)
	}
	a.Pods.remove(terminating)
	snap = a.Snapshot()
	if b := snap.Queue("b"); b.Deserved.Cpu().Cmp(resource.MustParse("6")) != 0 || !quota.Equals(snap.Claimable, cpu("6")) || len(snap.Spare) != 0 {
		t.Errorf("after the deletion: b deserves %v, claimable %v, spare %v; want 6, 6, no spare", b.Deserved, snap.Claimable, snap.Spare)
	}
}

// TestUpdatesCountingAlikeChangeNothing: an update of a pod that changes nothing counted (a
// condition, a nomination, a label) leaves the sums as they are, not recomputed, and the shares
// fresh; one that does (a priority) is counted.
func TestUpdatesCountingAlikeChangeNothing(t *testing.T) {
	bound, pending := pod("a", "bound", "2", "n"), pod("a", "pending", "1", "")
	a := newTestAccounting(t, []runtime.Object{util.MakeQueue("root").Obj(), util.MakeQueue("a").Obj()},
		util.MakeNode("n", "10", "10Gi"), bound, pending)
	lists := func() (allocated, pendingList uintptr) {
		a.Pods.mu.RLock()
		defer a.Pods.mu.RUnlock()
		q := a.Pods.queues["a"]
		return reflect.ValueOf(q.Allocated).Pointer(), reflect.ValueOf(q.Pending).Pointer()
	}
	allocated, asked := lists()
	a.Snapshot()
	computed := a.readShares().computedGen
	for _, change := range []func(*v1.Pod){
		func(p *v1.Pod) { p.Status.NominatedNodeName = "n" },
		func(p *v1.Pod) {
			p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionFalse})
		},
		func(p *v1.Pod) { p.Labels["extra"] = "x" },
	} {
		for _, p := range []*v1.Pod{bound, pending} {
			change(p)
			a.Pods.upsert(p.DeepCopy())
		}
	}
	if nowAllocated, nowAsked := lists(); nowAllocated != allocated || nowAsked != asked {
		t.Error("updates that change nothing counted replaced the queue's sums")
	}
	if a.Snapshot(); a.readShares().computedGen != computed {
		t.Error("updates that change nothing counted computed the shares again")
	}
	if got := a.Pods.Usage("a"); got.Allocated.Cpu().String() != "2" || got.Pending.Cpu().String() != "1" || got.Pods != 2 {
		t.Errorf("after the updates: %+v, want 2 cpu allocated, 1 pending, 2 pods", got)
	}
	if a.Pods.PodCount("a") != 2 || a.Pods.PodCount("none") != 0 {
		t.Errorf("pod counts: a %d, an unknown queue %d; want 2 and 0", a.Pods.PodCount("a"), a.Pods.PodCount("none"))
	}
	raised := bound.DeepCopy()
	raised.Spec.Priority = ptr.To[int32](100)
	a.Pods.upsert(raised)
	if !a.Pods.HasBoundBelow("a", 101) || a.Pods.HasBoundBelow("a", 100) {
		t.Error("a raised priority was not counted")
	}
}

// A pod resolved only by its namespace, and not on a node yet, is resolved again at its updates (its
// unit, or the Job between it and its unit, may reach the caches after it); once on a node it keeps
// its queue.
func TestQueueSettlesOnceBound(t *testing.T) {
	ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", Annotations: map[string]string{"scheduling.queue-scheduler.io/queue": "a"}}}
	a := newTestAccounting(t, []runtime.Object{util.MakeQueue("root").Obj(), util.MakeQueue("a").Obj(),
		util.MakeQueue("b").Obj(), util.MakeQueue("c").Obj()}, ns)
	p := util.MakePod("ns", "p").UID("p").Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()
	a.Pods.upsert(p.DeepCopy())
	p.Labels = map[string]string{"scheduling.queue-scheduler.io/queue": "b"}
	a.Pods.upsert(p.DeepCopy())
	if got := a.Pods.Usage("b").Pods; got != 1 {
		t.Fatalf("pods of b after the pending pod's update: %d, want 1", got)
	}
	if got := a.Pods.Usage("a").Pods; got != 0 {
		t.Fatalf("pods of a after the pending pod moved: %d, want 0", got)
	}
	q := util.MakePod("ns", "q").UID("q").Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()
	a.Pods.upsert(q.DeepCopy())
	a.Pods.Assume(q)
	q.Labels = map[string]string{"scheduling.queue-scheduler.io/queue": "c"}
	q.Spec.NodeName = "n"
	a.Pods.upsert(q.DeepCopy())
	if got, err := a.QueueOf(q); err != nil || got != "a" {
		t.Errorf("QueueOf of a pod assumed in a: %q, %v; want a", got, err)
	}
	if got := allocatedCPU(a, "a"); got != "1" {
		t.Errorf("allocated of a: %s, want 1", got)
	}
}

// Room freed names the pod that left and its node when a bound pod leaves, for the plugin that lets
// pods in on it to tell whether the scheduler's snapshot counts it yet; a pod that asks for less
// names none. Each is numbered in the order the usage counted it, the last number read at once.
func TestRoomFreedNamesThePodThatLeft(t *testing.T) {
	bound := pod("a", "bound", "2", "n")
	a := newTestAccounting(t, []runtime.Object{util.MakeQueue("root").Obj(), util.MakeQueue("a").Obj()},
		util.MakeNode("n", "10", "10Gi"), bound)
	var told []RoomFreed
	a.Events.RoomFreed.Subscribe(func(f RoomFreed) { told = append(told, f) })
	smaller := pod("a", "bound", "1", "n") // the same pod, asking for less
	a.Pods.upsert(smaller)
	a.Pods.remove(smaller)
	if len(told) != 2 {
		t.Fatalf("told %+v, want the shrink and the leaving", told)
	}
	if shrink := told[0]; shrink.Queue != "a" || shrink.Requests.Cpu().String() != "1" || shrink.Pod != "" || shrink.Node != "" {
		t.Errorf("shrink: %+v, want 1 cpu of queue a, no pod named", shrink)
	}
	if gone := told[1]; gone.Queue != "a" || gone.Requests.Cpu().String() != "1" || gone.Pod != bound.UID || gone.Node != "n" {
		t.Errorf("leaving: %+v, want 1 cpu of queue a, pod bound on node n", gone)
	}
	if told[0].Seq == 0 || told[1].Seq != told[0].Seq+1 || a.Pods.RoomFreedSeq() != told[1].Seq {
		t.Errorf("room freed numbered %d then %d, last counted %d; want one after the other, the last counted",
			told[0].Seq, told[1].Seq, a.Pods.RoomFreedSeq())
	}
}
