package reclaim

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	clocktesting "k8s.io/utils/clock/testing"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting/accountingtest"
	"github.com/queue-scheduler/queue-scheduler/pkg/cycle"
	"github.com/queue-scheduler/queue-scheduler/pkg/gangs"
	"github.com/queue-scheduler/queue-scheduler/pkg/podindex"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// A victim the accounting sees leave stays on its way out while a plan's node snapshot still shows
// it: that snapshot, taken before kube-scheduler's cache heard of it, shows it as it was, and a
// second preemptor reading it must see room being freed, not evict again. Once a plan's snapshot no
// longer shows it, it is forgotten. A victim sent back to the scheduling queue holds nothing on the
// node and is forgotten at once.
func TestVictimsLeftStayGoingWhileTheSnapshotShowsThem(t *testing.T) {
	f := newInflight(clocktesting.NewFakeClock(time.Now()))
	leaving, released, held := borrowerPod("leaving", 1), borrowerPod("released", 1), borrowerPod("held", 1)
	f.add([]*v1.Pod{leaving, released, held})
	states := map[string]victimState{"leaving": victimLeaving, "released": victimReleased, "held": victimHeld}
	state := func(p *v1.Pod) victimState { return states[p.Name] }
	queueOf := func(*v1.Pod) (string, error) { return "borrower", nil }
	gangOf := func(*v1.Pod) string { return "" }
	node := util.MakeNode("n", "3", "10Gi")
	before := internalcache.NewSnapshot([]*v1.Pod{leaving, released, held}, []*v1.Node{node})

	_, _, alive := f.pending(state, queueOf, gangOf, before.NodeInfos())
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
	f.pending(state, queueOf, gangOf, before.NodeInfos())
	if !f.evicting(leaving.UID) {
		t.Error("the victim seen leaving was no longer going while the snapshot still showed it")
	}
	after := internalcache.NewSnapshot([]*v1.Pod{held}, []*v1.Node{node})
	f.pending(state, queueOf, gangOf, after.NodeInfos())
	if f.evicting(leaving.UID) || len(f.left) != 0 {
		t.Errorf("the victim seen leaving was still going once the snapshot no longer showed it (left %v)", f.left)
	}
}

// A pod its queue refused evicts nothing more while the accounting still counts the victims of the
// preemption it was nominated for, terminating ones too: the queue refuses it on numbers that hold
// them, while the scheduler's cache may have dropped them, and a dry run would take one victim too
// many. It may preempt again once an eviction failed, once a victim is still there gangs.AttemptSlack
// after its deletion was due, or, for a victim whose deletion never began, after its preemption.
func TestARefusedPreemptorWaitsForItsLastVictims(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fake := clocktesting.NewFakeClock(time.Now())
	kube := kubefake.NewClientset()
	acct, factory := accountingtest.StartWith(ctx, t, kube, accounting.Config{Clock: fake}, util.MakeQueue("borrower").Obj(), util.MakeQueue("owner").Obj())
	r := &Reclaim{handle: &activations{}, acct: acct, inflight: newInflight(fake), pods: factory.Core().V1().Pods().Lister(), clock: fake,
		waiting: podindex.New(), nominated: newNominated(schedulingv1beta1.PodGroupKey)}
	victims := map[string]*v1.Pod{}
	for _, name := range []string{"terminating", "untouched", "refused"} {
		victims[name] = borrowerPod(name, 0)
		if _, err := kube.CoreV1().Pods("ns").Create(ctx, victims[name], metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, ctx, "the victims bound in the accounting", func() bool {
		return acct.Pods.Holds(victims["terminating"]) && acct.Pods.Holds(victims["untouched"]) && acct.Pods.Holds(victims["refused"])
	})
	preemptors := map[string]*v1.Pod{}
	for name, victim := range victims {
		preemptors[name] = pendingPod("preemptor-of-" + name)
		r.inflight.candidate(preemptors[name].UID, "n", []*v1.Pod{victim})
		r.inflight.settle(preemptors[name].UID, "n")
	}
	waits := func(name string) bool {
		return strings.Contains(refusedPostFilter(ctx, r, preemptors[name]), "victims of its last preemption")
	}

	for name := range victims {
		if !waits(name) {
			t.Errorf("the preemptor of %s evicts again while its victim is bound", name)
		}
	}
	r.inflight.drop([]*v1.Pod{victims["refused"]})
	if waits("refused") {
		t.Error("a preemptor whose victim's eviction failed still waits for it")
	}
	// A grace period of a minute: the deletion is due a minute after it began.
	terminating := victims["terminating"].DeepCopy()
	terminating.DeletionTimestamp = &metav1.Time{Time: fake.Now().Add(time.Minute)}
	if _, err := kube.CoreV1().Pods("ns").Update(ctx, terminating, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the victim terminating", func() bool {
		live, err := r.pods.Pods("ns").Get(terminating.Name)
		return acct.Pods.Leaving(terminating) && err == nil && live.DeletionTimestamp != nil
	})
	fake.Step(gangs.AttemptSlack)
	if !waits("terminating") {
		t.Error("a preemptor whose victim is terminating, within its grace period, evicts again")
	}
	if waits("untouched") {
		t.Error("a preemptor whose victim's deletion never began still waits for it past the slack")
	}
	fake.Step(time.Minute)
	if waits("terminating") {
		t.Error("a preemptor whose victim is stuck terminating past the slack still waits for it")
	}
	if len(r.inflight.of) != 0 {
		t.Errorf("%d preemptors still wait for their victims, want none", len(r.inflight.of))
	}
}

// A victim the accounting counts gone frees its preemptor at once, and the next plan forgets the
// preemptors whose victims are all gone, whether or not they come back.
func TestAPreemptorIsFreedWhenItsVictimsAreGone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kube := kubefake.NewClientset()
	acct, factory := accountingtest.Start(ctx, t, kube, util.MakeQueue("borrower").Obj(), util.MakeQueue("owner").Obj())
	r := &Reclaim{handle: &activations{}, acct: acct, inflight: newInflight(acct.Clock()), pods: factory.Core().V1().Pods().Lister(),
		clock: acct.Clock(), waiting: podindex.New(), nominated: newNominated(schedulingv1beta1.PodGroupKey)}
	victim := borrowerPod("victim", 0)
	if _, err := kube.CoreV1().Pods(victim.Namespace).Create(ctx, victim, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the victim bound in the accounting", func() bool { return acct.Pods.Holds(victim) })
	preemptor := pendingPod("preemptor")
	r.inflight.candidate(preemptor.UID, "n", []*v1.Pod{victim})
	r.inflight.settle(preemptor.UID, "n")
	if err := kube.CoreV1().Pods(victim.Namespace).Delete(ctx, victim.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the victim gone from the accounting", func() bool { return !acct.Pods.Holds(victim) })
	r.newPlan(acct.Snapshot(), pendingPod("another"), nil)
	if len(r.inflight.of) != 0 {
		t.Errorf("%d preemptors still wait for victims gone, want none", len(r.inflight.of))
	}
	if msg := refusedPostFilter(ctx, r, preemptor); strings.Contains(msg, "victims of its last preemption") {
		t.Errorf("a preemptor whose victim is gone still waits: %s", msg)
	}
}

// refusedPostFilter runs PostFilter for a pod its queue refused, with no nodes, and returns its
// message.
func refusedPostFilter(ctx context.Context, r *Reclaim, pod *v1.Pod) string {
	state := framework.NewCycleState()
	cycle.SetQueueVerdict(state, cycle.QueueVerdict{Refused: true, Message: `queue "owner" is at its share`})
	_, status := r.PostFilter(ctx, state, pod, framework.NewDefaultNodeToStatus())
	return status.Message()
}

// A victim whose eviction got no answer is on its way out while the accounting has not seen it leave,
// for gangs.AttemptSlack: the server may have applied the eviction. Still held after that, it was
// not, and it holds its room again.
func TestAnUnansweredEvictionLapsesWhenTheVictimStays(t *testing.T) {
	fake := clocktesting.NewFakeClock(time.Now())
	f := newInflight(fake)
	victim := borrowerPod("victim", 1)
	f.add([]*v1.Pod{victim})
	f.beginUnsure(victim.UID)
	f.fail("preemptor", "n", []*v1.Pod{victim})
	held := func(*v1.Pod) victimState { return victimHeld }
	queueOf := func(*v1.Pod) (string, error) { return "borrower", nil }
	gangOf := func(*v1.Pod) string { return "" }
	if _, _, alive := f.pending(held, queueOf, gangOf, internalcache.NewSnapshot([]*v1.Pod{victim}, []*v1.Node{util.MakeNode("n", "3", "10Gi")}).NodeInfos()); len(alive) != 1 || !f.evicting(victim.UID) {
		t.Errorf("just after the unanswered eviction: under way %v, evicting %t; want the victim going", names(alive), f.evicting(victim.UID))
	}
	fake.Step(gangs.AttemptSlack)
	if _, _, alive := f.pending(held, queueOf, gangOf, internalcache.NewSnapshot([]*v1.Pod{victim}, []*v1.Node{util.MakeNode("n", "3", "10Gi")}).NodeInfos()); len(alive) != 0 || f.evicting(victim.UID) {
		t.Errorf("still held after the slack: under way %v, evicting %t; want it staying", names(alive), f.evicting(victim.UID))
	}
}
