package reclaim

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting/accountingtest"
	"github.com/queue-scheduler/queue-scheduler/pkg/gangs"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// A victim the accounting sees leave stays on its way out for gangs.AttemptSlack: the node snapshot
// of a cycle that began before can still show it as it was, and a second preemptor reading that
// snapshot must see room being freed, not evict again. A victim sent back to the scheduling queue
// holds nothing on the node and is forgotten at once.
func TestVictimsLeftStayGoingForTheSlack(t *testing.T) {
	fake := clocktesting.NewFakeClock(time.Now())
	f := newInflight(fake)
	leaving, released, held := borrowerPod("leaving", 1), borrowerPod("released", 1), borrowerPod("held", 1)
	f.add([]*v1.Pod{leaving, released, held})
	states := map[string]victimState{"leaving": victimLeaving, "released": victimReleased, "held": victimHeld}
	state := func(p *v1.Pod) victimState { return states[p.Name] }
	queueOf := func(*v1.Pod) (string, error) { return "borrower", nil }
	gangOf := func(*v1.Pod) string { return "" }

	_, _, alive := f.pending(state, queueOf, gangOf)
	if got := names(alive); len(got) != 1 || got[0] != "held" {
		t.Errorf("victims still holding their room: %v, want [held]", got)
	}
	for _, tt := range []struct {
		pod  *v1.Pod
		want bool
	}{{leaving, true}, {released, false}, {held, true}} {
		if got := f.evicting(tt.pod.UID); got != tt.want {
			t.Errorf("%s on its way out: %v, want %v", tt.pod.Name, got, tt.want)
		}
	}
	fake.Step(gangs.AttemptSlack - time.Nanosecond)
	if !f.evicting(leaving.UID) {
		t.Error("the victim seen leaving was no longer going before the slack ran out")
	}
	fake.Step(time.Nanosecond)
	if f.evicting(leaving.UID) {
		t.Error("the victim seen leaving was still going once the slack ran out")
	}
	f.pending(state, queueOf, gangOf)
	if len(f.left) != 0 {
		t.Errorf("victims left kept past the slack: %v", f.left)
	}
}

// A preemptor evicts nothing more while the accounting still counts the victims of the preemption it
// was nominated for, terminating ones too: its queue refuses it on numbers that hold them, while the
// scheduler's cache may have dropped them, and a dry run would then take one victim too many. It may
// preempt again once they are counted gone, once a victim is stuck terminating past the slack, or
// once an eviction failed.
func TestAPreemptorWaitsUntilItsVictimsAreCountedGone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fake := clocktesting.NewFakeClock(time.Now())
	kube := kubefake.NewClientset()
	acct, factory := accountingtest.StartWith(ctx, t, kube, accounting.Config{Clock: fake}, util.MakeQueue("borrower").Obj())
	r := &Reclaim{acct: acct, inflight: newInflight(fake), pods: factory.Core().V1().Pods().Lister(), clock: fake}
	victim, refused := borrowerPod("victim", 0), borrowerPod("refused", 0)
	for _, p := range []*v1.Pod{victim, refused} {
		if _, err := kube.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, ctx, "the victims bound in the accounting", func() bool { return acct.Holds(victim) && acct.Holds(refused) })
	preemptor, other := util.MakePod("ns", "preemptor").UID("preemptor").Obj(), util.MakePod("ns", "other").UID("other").Obj()
	r.inflight.candidate(preemptor.UID, "n", []*v1.Pod{victim})
	r.inflight.candidate(other.UID, "n", []*v1.Pod{refused})
	r.inflight.settle(preemptor.UID, "n")
	r.inflight.settle(other.UID, "n")
	eligible := func(p *v1.Pod) bool { ok, _ := r.PodEligibleToPreemptOthers(ctx, p, nil); return ok }

	if eligible(preemptor) {
		t.Error("a preemptor whose victim is still bound may evict again")
	}
	r.inflight.drop(refused.UID)
	if !eligible(other) {
		t.Error("a preemptor whose victim's eviction failed may not evict again")
	}
	terminating := victim.DeepCopy()
	terminating.DeletionTimestamp = &metav1.Time{Time: fake.Now()}
	if _, err := kube.CoreV1().Pods(victim.Namespace).Update(ctx, terminating, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the victim terminating", func() bool {
		live, err := r.pods.Pods(victim.Namespace).Get(victim.Name)
		return acct.Leaving(victim) && err == nil && live.DeletionTimestamp != nil
	})
	if eligible(preemptor) {
		t.Error("a preemptor whose victim is terminating may evict again")
	}
	fake.Step(gangs.AttemptSlack)
	if !eligible(preemptor) {
		t.Error("a preemptor whose victim is stuck terminating past the slack may not evict again")
	}
	if len(r.inflight.of) != 0 {
		t.Errorf("%d preemptors still wait for their victims, want none", len(r.inflight.of))
	}
}

// A victim the accounting counts gone frees its preemptor at once, and the preemptor is forgotten.
func TestAPreemptorIsFreedWhenItsVictimsAreGone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kube := kubefake.NewClientset()
	acct, factory := accountingtest.Start(ctx, t, kube, util.MakeQueue("borrower").Obj())
	r := &Reclaim{acct: acct, inflight: newInflight(acct.Clock()), pods: factory.Core().V1().Pods().Lister(), clock: acct.Clock()}
	victim := borrowerPod("victim", 0)
	if _, err := kube.CoreV1().Pods(victim.Namespace).Create(ctx, victim, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the victim bound in the accounting", func() bool { return acct.Holds(victim) })
	preemptor := util.MakePod("ns", "preemptor").UID("preemptor").Obj()
	r.inflight.candidate(preemptor.UID, "n", []*v1.Pod{victim})
	r.inflight.settle(preemptor.UID, "n")
	if err := kube.CoreV1().Pods(victim.Namespace).Delete(ctx, victim.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the victim gone from the accounting", func() bool { return !acct.Holds(victim) })
	r.inflight.forgetOwn(r.stillCounted)
	if len(r.inflight.of) != 0 {
		t.Errorf("%d preemptors still wait for victims gone, want none", len(r.inflight.of))
	}
	if ok, why := r.PodEligibleToPreemptOthers(ctx, preemptor, nil); !ok {
		t.Errorf("a preemptor whose victim is gone may not evict: %s", why)
	}
}
