package reclaim

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting/accountingtest"
	"github.com/queue-scheduler/queue-scheduler/pkg/cycle"
	"github.com/queue-scheduler/queue-scheduler/pkg/podindex"
	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// The single pods reclaim nominated and that are still pending hold their queue's room for the
// queue's other pods, never for themselves nor for another queue; a bound one is forgotten.
func TestNominatedPodsHoldTheirQueuesRoom(t *testing.T) {
	n := newNominated(schedulingv1beta1.PodGroupKey)
	cpu := map[v1.ResourceName]string{v1.ResourceCPU: "1"}
	a := util.MakePod("ns", "a").UID("a").Req(cpu).Obj()
	b := util.MakePod("ns", "b").UID("b").Req(cpu).Obj()
	c := util.MakePod("ns", "c").UID("c").Req(cpu).Obj()
	n.set(a, "two", "node-2")
	n.set(b, "two", "node-2")
	n.set(c, "three", "node-1")
	bound := map[string]bool{}
	pending := func(p *v1.Pod) bool { return !bound[p.Name] }
	other := util.MakePod("ns", "other").UID("other").Obj()

	if got := n.holding("two", other, pending); got.Cpu().String() != "2" {
		t.Errorf("room held for another pod of queue two: %s, want the 2 CPUs of its nominated pods", got.Cpu())
	}
	if got := n.holding("two", a, pending); got.Cpu().String() != "1" {
		t.Errorf("room held against a nominated pod itself: %s, want only the other pod's 1 CPU", got.Cpu())
	}
	bound["b"] = true
	if got := n.holding("two", other, pending); got.Cpu().String() != "1" {
		t.Errorf("a bound pod still held room: %s, want 1 CPU", got.Cpu())
	}
	n.set(a, "", "")
	if got := n.holding("two", other, pending); len(got) != 0 {
		t.Errorf("a pod whose nomination was cleared still held room: %v", got)
	}
	if got := n.holding("three", other, pending); got.Cpu().String() != "1" {
		t.Errorf("queue three's nominated pod: %s, want 1 CPU", got.Cpu())
	}
}

// A gang's members nominated by its reclaim hold their queue's room for the queue's other pods and
// gangs, never for their own gang's plan nor for another queue; a bound member is forgotten.
func TestNominatedGangMembersHoldTheirQueuesRoom(t *testing.T) {
	n := newNominated(schedulingv1beta1.PodGroupKey)
	member := func(name string) *v1.Pod {
		return util.MakePod("ns", name).UID(name).Label(schedulingv1beta1.PodGroupLabel, "g").
			Req(map[v1.ResourceName]string{v1.ResourceCPU: "2"}).Obj()
	}
	m0, m1 := member("m-0"), member("m-1")
	n.set(m0, "q", "node-a")
	n.set(m1, "q", "node-b")
	pending := func(p *v1.Pod) bool { return p.Name != "m-0" } // m-0 is bound
	other := util.MakePod("ns", "other").UID("other").Obj()
	if got := n.holding("q", other, pending); got.Cpu().String() != "2" {
		t.Errorf("room held for the queue's other preemptors: %s, want the 2 CPUs of the member still pending", got.Cpu())
	}
	if got := n.holding("q", member("m-2"), pending); len(got) != 0 {
		t.Errorf("the gang's own members held against its plan: %v", got)
	}
	if got := n.holding("other", other, pending); len(got) != 0 {
		t.Errorf("room held for another queue: %v", got)
	}
}

// settledSnapshot waits until the accounting's snapshot holds queue and stays as it is, and returns
// that snapshot: a refusal on an older one brings the pod back, which the tests of a refusal on the
// current specs must not see.
func settledSnapshot(t *testing.T, ctx context.Context, acct *accounting.Accounting, queue string) *policy.Snapshot {
	t.Helper()
	var snap *policy.Snapshot
	if err := wait.PollUntilContextTimeout(ctx, time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
		last := snap
		snap = acct.Snapshot()
		return snap.Queue(queue) != nil && snap == last, nil
	}); err != nil {
		t.Fatalf("the shares never rested on the specs of queue %s", queue)
	}
	return snap
}

// A pod reclaim cannot help gives up the node an earlier cycle nominated it to, so that pods of the
// same or a lower priority no longer wait for room it may not take.
func TestRefusalClearsTheNomination(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	acct, _ := accountingtest.Start(ctx, t, kubefake.NewClientset(), util.MakeQueue("two").Obj())
	r := &Reclaim{acct: acct, waiting: podindex.New(), nominated: newNominated(schedulingv1beta1.PodGroupKey)}
	pod := util.MakePod("ns", "p").UID("p").Obj()
	pod.Status.NominatedNodeName = "node-2"
	r.nominated.set(pod, "two", "node-2")
	result, status := r.refuse(framework.NewCycleState(), settledSnapshot(t, ctx, acct, "two"), pod, "queue two is at its share")
	if status.Code() != fwk.Unschedulable {
		t.Errorf("status %v, want Unschedulable", status)
	}
	if result == nil || result.Mode() != fwk.ModeOverride || result.NominatedNodeName != "" {
		t.Fatalf("result %+v: want the nomination cleared (override with no node)", result)
	}
	if got := r.nominated.holding("two", util.MakePod("ns", "other").UID("other").Obj(), func(*v1.Pod) bool { return true }); len(got) != 0 {
		t.Errorf("the refused pod still holds its queue's room: %v", got)
	}
}

// activations is a framework handle that records, safely from any goroutine, the pods it is asked
// to activate.
type activations struct {
	fwk.Handle
	mu   sync.Mutex
	pods []string
}

// SnapshotSharedLister is the framework's, or an empty snapshot without one.
func (a *activations) SnapshotSharedLister() fwk.SharedLister {
	if a.Handle != nil {
		return a.Handle.SnapshotSharedLister()
	}
	return internalcache.NewSnapshot(nil, nil)
}

func (a *activations) Activate(_ klog.Logger, pods map[string]*v1.Pod) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, p := range pods {
		a.pods = append(a.pods, p.Name)
	}
}

// activated lists the pods activated so far, in order.
func (a *activations) activated() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.pods)
}

// A refusal that rests on a snapshot read before a queue's spec changed brings the pod back at once:
// the change's event may have come before the pod was set aside, and none comes later. A refusal on
// the current specs sets the pod aside until the next change.
func TestRefusalOnOlderQueueSpecsComesBack(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, handle, before, pod := setAsideOnCurrentSpecs(t, ctx, false)
	turnReclaimable(t, ctx, r.acct)
	if err := wait.PollUntilContextTimeout(ctx, time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
		return r.acct.Snapshot().QueueSpecs != before.QueueSpecs, nil
	}); err != nil {
		t.Fatal("the snapshots never rested on the spec change")
	}
	r.refuse(framework.NewCycleState(), before, pod, "no reclaimable queue holds more than its share")
	if len(handle.activated()) != 1 || handle.activated()[0] != "p" {
		t.Errorf("activated %v; want the pod refused on specs older than the store's", handle.activated())
	}
}

// A pod set aside on the current specs comes back once the snapshots rest on a queue's new spec
// (Events.SharesComputed): the scheduler's own event of the change may have come before the
// accounting's snapshots held it, and then found the pod refused on the old specs.
func TestRefusedPodsComeBackOnceTheSnapshotsRestOnNewSpecs(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, handle, _, _ := setAsideOnCurrentSpecs(t, ctx, true)
	turnReclaimable(t, ctx, r.acct)
	if err := wait.PollUntilContextTimeout(ctx, time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
		r.acct.Snapshot() // a reader's build, as a scheduling cycle's
		return len(handle.activated()) == 1, nil
	}); err != nil {
		t.Fatalf("activated %v once the snapshots rest on the new spec; want the refused pod", handle.activated())
	}
}

// setAsideOnCurrentSpecs refuses pod p of queue borrower on the settled snapshot, which it returns,
// and checks that the pod stays set aside; with subscribed, Reclaim hears of the shares' computations
// as New registers it.
func setAsideOnCurrentSpecs(t *testing.T, ctx context.Context, subscribed bool) (*Reclaim, *activations, *policy.Snapshot, *v1.Pod) {
	t.Helper()
	acct, _ := accountingtest.Start(ctx, t, kubefake.NewClientset(), util.MakeQueue("borrower").Obj())
	handle := &activations{}
	r := &Reclaim{handle: handle, acct: acct, waiting: podindex.New(), nominated: newNominated(schedulingv1beta1.PodGroupKey)}
	current := settledSnapshot(t, ctx, acct, "borrower")
	if subscribed {
		r.specsSeen.Store(current.QueueSpecs)
		acct.Events.SharesComputed.SubscribeSignal(r.onSharesComputed)
	}
	pod := util.MakePod("ns", "p").UID("p").Obj()
	r.refuse(framework.NewCycleState(), current, pod, "no reclaimable queue holds more than its share")
	if len(handle.activated()) != 0 {
		t.Fatalf("activated %v on a refusal that rests on the current specs", handle.activated())
	}
	return r, handle, current, pod
}

// turnReclaimable makes queue borrower reclaimable: a new spec, at generation 2.
func turnReclaimable(t *testing.T, ctx context.Context, acct *accounting.Accounting) {
	t.Helper()
	turned := util.MakeQueue("borrower").Reclaimable(true).Obj()
	turned.Generation = 2
	if _, err := acct.Client.SchedulingV1beta1().Queues().Update(ctx, turned, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// A refusal that rests on a snapshot read before a computation of the shares left a queue holding
// more above its share brings the pod back at once: the computation's call to let refused pods in may
// have come before the pod was set aside, and none comes later. On the shares of now, it waits.
func TestRefusalBeforeTheSpareGrewComesBack(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kube := kubefake.NewClientset(util.MakeNode("n", "3", "10Gi"))
	acct, _ := accountingtest.Start(ctx, t, kube, util.MakeQueue("borrower").Obj(), util.MakeQueue("owner").Obj())
	handle := &activations{}
	r := &Reclaim{handle: handle, acct: acct, waiting: podindex.New(), nominated: newNominated(schedulingv1beta1.PodGroupKey)}
	pod := util.MakePod("ns", "p").UID("p").Label(schedulingv1beta1.QueueLabel, "owner").Obj()
	before := settledSnapshot(t, ctx, acct, "owner")
	r.refuse(framework.NewCycleState(), before, pod, "no reclaimable queue holds more than its share")
	if len(handle.activated()) != 0 {
		t.Fatalf("activated %v on a refusal that rests on the current shares", handle.activated())
	}
	// The owner asks for 2 CPUs and the borrower holds all 3: the borrower deserves 1.5 and holds 1.5
	// above it.
	for _, p := range []*v1.Pod{
		util.MakePod("ns", "asks").UID("asks").Label(schedulingv1beta1.QueueLabel, "owner").Req(map[v1.ResourceName]string{v1.ResourceCPU: "2"}).Obj(),
		util.MakePod("ns", "holds").UID("holds").Label(schedulingv1beta1.QueueLabel, "borrower").Req(map[v1.ResourceName]string{v1.ResourceCPU: "3"}).Node("n").Obj(),
	} {
		if _, err := kube.CoreV1().Pods("ns").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, ctx, "the spare to grow", func() bool { return acct.SpareGrowths() != before.SpareGrowths })
	r.refuse(framework.NewCycleState(), before, pod, "no reclaimable queue holds more than its share")
	if len(handle.activated()) != 1 || handle.activated()[0] != "p" {
		t.Fatalf("activated %v; want the pod refused before the spare grew", handle.activated())
	}
	var now *policy.Snapshot
	waitFor(t, ctx, "a snapshot of the grown spare", func() bool {
		now = acct.Snapshot()
		return now.SpareGrowths == acct.SpareGrowths()
	})
	r.refuse(framework.NewCycleState(), now, pod, "no reclaimable queue holds more than its share")
	if len(handle.activated()) != 1 {
		t.Errorf("activated %v; want nothing more for a refusal on the shares that grew the spare", handle.activated())
	}
}

// A pod its queue turned away only because older pods of the queue go first is left alone: nothing
// is evicted for it, and a nomination it holds stands.
func TestPodBehindOlderOnesTakesNothingBack(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	acct, _ := accountingtest.Start(ctx, t, kubefake.NewClientset(), util.MakeQueue("two").Obj())
	r := &Reclaim{acct: acct, waiting: podindex.New(), nominated: newNominated(schedulingv1beta1.PodGroupKey)}
	pod := util.MakePod("ns", "p").UID("p").Label(schedulingv1beta1.QueueLabel, "two").Obj()
	state := framework.NewCycleState()
	cycle.SetQueueVerdict(state, cycle.QueueVerdict{Refused: true, Behind: true,
		Message: `older pods of queue "two" were let in for the room that freed, and go first`})
	result, status := r.PostFilter(ctx, state, pod, nil)
	if result != nil || status.Code() != fwk.Unschedulable || status.Message() != "reclaim: older pods of the queue go first" {
		t.Errorf("PostFilter: %+v, %v; want no result, Unschedulable, the older pods named", result, status)
	}
}

// A pod its queue refused on a snapshot older than the accounting's numbers evicts nothing: the dry
// run would measure what must be freed against the old numbers and count what its victims free on
// the new ones. It is activated, to be judged again on the latest.
func TestARefusalOnOlderNumbersEvictsNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kube := kubefake.NewClientset()
	acct, _ := accountingtest.Start(ctx, t, kube, util.MakeQueue("two").Obj())
	handle := &activations{}
	r := &Reclaim{handle: handle, acct: acct, waiting: podindex.New(), nominated: newNominated(schedulingv1beta1.PodGroupKey),
		inflight: newInflight(acct.Clock())}
	judged := settledSnapshot(t, ctx, acct, "two")
	state := framework.NewCycleState()
	cycle.Snapshot(state, func() *policy.Snapshot { return judged })
	cycle.SetQueueVerdict(state, cycle.QueueVerdict{Refused: true, Message: `queue "two" is at its capability`})
	arrival := util.MakePod("ns", "arrival").UID("arrival").Label(schedulingv1beta1.QueueLabel, "two").Obj()
	if _, err := kube.CoreV1().Pods("ns").Create(ctx, arrival, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "a snapshot that counts the arrival", func() bool { return acct.ChangedSince(judged) })
	pod := util.MakePod("ns", "p").UID("p").Label(schedulingv1beta1.QueueLabel, "two").Obj()
	result, status := r.PostFilter(ctx, state, pod, nil)
	if result != nil || status.Message() != "reclaim: the queues changed while the pod was tried; it is tried again on them" {
		t.Errorf("PostFilter: %+v, %v; want no result, tried again", result, status)
	}
	if got := handle.activated(); !slices.Equal(got, []string{"p"}) {
		t.Errorf("activated %v; want the pod, to be judged again", got)
	}
}
