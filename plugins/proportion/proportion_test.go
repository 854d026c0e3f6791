package proportion

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting/accountingtest"
	"github.com/queue-scheduler/queue-scheduler/pkg/holdreport"
	"github.com/queue-scheduler/queue-scheduler/pkg/podindex"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

func TestIsSchedulableAfterPodDelete(t *testing.T) {
	bound := util.MakePod("ns", "bound").Node("n").Obj()
	tests := []struct {
		name    string
		deleted any
		want    fwk.QueueingHint
	}{
		{name: "a bound pod frees what it held", deleted: bound, want: fwk.Queue},
		{name: "an unbound pod held nothing", deleted: util.MakePod("ns", "pending").Obj(), want: fwk.QueueSkip},
		{name: "unknown object", deleted: "garbage", want: fwk.Queue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logger, _ := ktesting.NewTestContext(t)
			got, err := isSchedulableAfterPodDelete(logger, util.MakePod("ns", "p").Obj(), tt.deleted, nil)
			if err != nil || got != tt.want {
				t.Errorf("hint: got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

// newTestAccounting starts an accounting on fake clients holding the queue objects.
func newTestAccounting(t *testing.T, objs ...runtime.Object) *accounting.Accounting {
	t.Helper()
	return newTestAccountingWith(t, nil, objs...)
}

// newTestAccountingWith is newTestAccounting with nodes and pods in the cluster.
func newTestAccountingWith(t *testing.T, cluster []runtime.Object, objs ...runtime.Object) *accounting.Accounting {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	acct, _ := accountingtest.Start(ctx, t, kubefake.NewClientset(cluster...), objs...)
	return acct
}

// A queue's spec change brings back the pods rejected in it and in the queues below it; a status
// write brings back nothing.
func TestQueueSpecChangeActivatesItsSubtree(t *testing.T) {
	acct := newTestAccounting(t, util.MakeQueue("root").Obj(), util.MakeQueue("a").Obj(),
		util.MakeQueue("b").Parent("a").Obj(), util.MakeQueue("c").Obj())
	handle := &activations{}
	p := newTestPlugin(acct, handle)
	for _, queue := range []string{"a", "b", "c"} {
		p.Held.Add(util.MakePod("ns", "in-"+queue).Obj(), queue)
	}
	withGeneration := func(g int64) *schedulingv1beta1.Queue {
		q := util.MakeQueue("a").Obj()
		q.Generation = g
		return q
	}
	p.onQueueUpdate(withGeneration(2), withGeneration(2))
	if len(handle.pods) != 0 {
		t.Errorf("status write: activated %v", handle.pods)
	}
	p.onQueueUpdate(withGeneration(2), withGeneration(3))
	sort.Strings(handle.pods)
	if diff := cmp.Diff([]string{"in-a", "in-b"}, handle.pods); diff != "" {
		t.Errorf("spec change (-want,+got):\n%s", diff)
	}
}

// A deleted PodGroup gives back what it reserved: the pods held in the tree of its queue (below the
// queue's top-level ancestor, whose capability counted the reservation for every queue below it)
// come back, those of another tree stay; the accounting tells of the deletion.
func TestReleasedWorkActivatesItsQueuesTree(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	group := util.MakePodGroup("ns", "big").MinMember(2).Queue("team").Obj()
	acct, _ := accountingtest.Start(ctx, t, kubefake.NewClientset(), util.MakeQueue("root").Obj(), util.MakeQueue("org").Obj(),
		util.MakeQueue("team").Parent("org").Obj(), util.MakeQueue("sibling").Parent("org").Obj(), util.MakeQueue("other").Obj(), group)
	handle := &activations{}
	p := newTestPlugin(acct, handle)
	for _, queue := range []string{"org", "team", "sibling", "other"} {
		p.Held.Add(util.MakePod("ns", "in-"+queue).Obj(), queue)
	}
	p.onWorkReleased("team")
	got := handle.names()
	sort.Strings(got)
	if diff := cmp.Diff([]string{"in-org", "in-sibling", "in-team"}, got); diff != "" {
		t.Errorf("activated for work released in team (-want,+got):\n%s", diff)
	}
	acct.Events.WorkReleased.Subscribe(p.onWorkReleased) // as New registers it
	p.Held.Add(util.MakePod("ns", "again-in-team").Obj(), "team")
	if err := acct.Client.SchedulingV1beta1().PodGroups("ns").Delete(ctx, "big", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
		return slices.Contains(handle.names(), "again-in-team"), nil
	}); err != nil {
		t.Fatalf("activated %v after the PodGroup was deleted; want again-in-team", handle.names())
	}
}

// newTestPlugin builds the plugin on acct, letting pods in through handle; its reporter is not run.
func newTestPlugin(acct *accounting.Accounting, handle *activations) *Proportion {
	return &Proportion{acct: acct, Holder: &holdreport.Holder{
		Held:      podindex.New(),
		Reporter:  holdreport.New(kubefake.NewClientset(), nil, nil, clock.RealClock{}),
		Activator: handle.Activate,
	}, line: newLine(), clock: clocktesting.NewFakePassiveClock(time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC))}
}

// activations records what a plugin lets into the active queue.
type activations struct {
	fwk.Handle
	mu   sync.Mutex
	pods []string
}

func (a *activations) Activate(_ klog.Logger, pods map[string]*v1.Pod) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, pod := range pods {
		a.pods = append(a.pods, pod.Name)
	}
}

// names returns the names of the pods let in so far.
func (a *activations) names() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.pods)
}

// A pod the scheduler sees before the accounting's handler does is counted on sight by PreFilter:
// its queue's share includes its demand at once. Of 2 cpu, b asks for 2; a's new pod asks for 1 and
// is in the informer's store only: counted, a deserves 1 and takes it; not counted, b would claim
// all of the room.
func TestPreFilterCountsThePodOnSight(t *testing.T) {
	asking := util.MakePod("ns", "b-0").UID("b-0").Label(schedulingv1beta1.QueueLabel, "b").
		Req(map[v1.ResourceName]string{v1.ResourceCPU: "2"}).Obj()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	acct, kube := accountingtest.Start(ctx, t, kubefake.NewClientset(util.MakeNode("n", "2", "8Gi"), asking), util.MakeQueue("root").Obj(),
		util.MakeQueue("a").Obj(), util.MakeQueue("b").Obj())
	if err := wait.PollUntilContextTimeout(context.Background(), time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return acct.Pods.Usage("b").Pods == 1, nil
	}); err != nil {
		t.Fatal("b's pod was never counted")
	}
	seen := util.MakePod("ns", "a-0").UID("a-0").Label(schedulingv1beta1.QueueLabel, "a").
		Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()
	if err := kube.Core().V1().Pods().Informer().GetStore().Add(seen); err != nil {
		t.Fatal(err)
	}
	p := newTestPlugin(acct, &activations{})
	if _, status := p.PreFilter(context.Background(), framework.NewCycleState(), seen, nil); status.Code() != fwk.Skip {
		t.Errorf("a pod counted on sight, below its share: %v %q; want admitted", status.Code(), status.Message())
	}
	if got := acct.Pods.Usage("a").Pods; got != 1 {
		t.Errorf("a counts %d pods after PreFilter, want 1", got)
	}
}

// A pod that no node can help, its queue or an ancestor at its capability, is held before
// scheduling with a reason autoscalers do not act on, unless a preemption in its queue could make
// room; a pod that fits goes on.
func TestPreEnqueueHoldsPodsAtTheirQueuesCapability(t *testing.T) {
	cpu := func(n string) map[v1.ResourceName]string { return map[v1.ResourceName]string{v1.ResourceCPU: n} }
	pod := func(name, req string, priority int32) *v1.Pod {
		return util.MakePod("ns", name).UID(name).Label(schedulingv1beta1.QueueLabel, "capped").Req(cpu(req)).Priority(priority).Obj()
	}
	bound := pod("bound", "2", 0)
	bound.Spec.NodeName = "n"
	neverPreempts := pod("never", "2", 10)
	neverPreempts.Spec.PreemptionPolicy = ptr.To(v1.PreemptNever)
	// A pod of an Enqueued QueueUnit is left to QueueUnit, whatever Proportion would say of it.
	ofEnqueuedUnit := pod("of-enqueued-unit", "2", 0)
	ofEnqueuedUnit.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "job", UID: "job"}}
	unit := util.MakeQueueUnit("ns", "job", "capped", "job").Obj()
	unit.Status.Phase = schedulingv1beta1.QueueUnitEnqueued
	tests := []struct {
		pod    *v1.Pod
		reason string
	}{
		{pod: pod("fits", "1", 0)},
		{pod: pod("over-parent", "2", 0), reason: holdreport.QueueCapability},
		{pod: pod("may-preempt", "2", 10)},
		{pod: neverPreempts, reason: holdreport.QueueCapability},
		{pod: ofEnqueuedUnit},
	}
	cluster := []runtime.Object{util.MakeNode("n", "100", "100Gi"), bound}
	for _, tt := range tests {
		cluster = append(cluster, tt.pod)
	}
	acct := newTestAccountingWith(t, cluster, util.MakeQueue("root").Obj(),
		util.MakeQueue("parent").Capability(cpu("3")).Obj(),
		util.MakeQueue("capped").Parent("parent").Capability(cpu("4")).Obj(), unit)
	// Every pod counted: what is left to check is the capability.
	if err := wait.PollUntilContextTimeout(context.Background(), time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return acct.Pods.Usage("capped").Pods == len(cluster)-1, nil
	}); err != nil {
		t.Fatal("the pods were never counted")
	}
	for _, tt := range tests {
		t.Run(tt.pod.Name, func(t *testing.T) {
			p := newTestPlugin(acct, &activations{})
			why := p.hold(tt.pod, "capped")
			if why.Reason != tt.reason {
				t.Errorf("hold reason %q (%s), want %q", why.Reason, why.Message, tt.reason)
			}
			status := p.PreEnqueue(context.Background(), tt.pod)
			if held := !status.IsSuccess(); held != (tt.reason != "") {
				t.Errorf("PreEnqueue: %v, want held %v", status, tt.reason != "")
			}
		})
	}
}

// BenchmarkDryRunStep measures what one victim step of a preemption dry run costs Proportion: the
// cycle state cloned for a node, a pod of the same queue taken off it (RemovePod) and the Filter of
// a pod PreFilter refused at its queue's capability.
func BenchmarkDryRunStep(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	const victims = 10
	objs := []runtime.Object{util.MakeNode("n", "100", "100Gi")}
	for i := range victims {
		objs = append(objs, util.MakePod("ns", fmt.Sprintf("v-%d", i)).UID(fmt.Sprintf("v-%d", i)).
			Label(schedulingv1beta1.QueueLabel, "a").Node("n").Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj())
	}
	acct, _ := accountingtest.Start(ctx, b, kubefake.NewClientset(objs...), util.MakeQueue("root").Obj(),
		util.MakeQueue("a").Capability(map[v1.ResourceName]string{v1.ResourceCPU: "10"}).Obj())
	if err := wait.PollUntilContextTimeout(ctx, time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return acct.Pods.Usage("a").Bound == victims, nil
	}); err != nil {
		b.Fatal("the victims were never counted")
	}
	p := newTestPlugin(acct, &activations{})
	preemptor := util.MakePod("ns", "preemptor").UID("preemptor").Label(schedulingv1beta1.QueueLabel, "a").
		Req(map[v1.ResourceName]string{v1.ResourceCPU: "2"}).Obj()
	state := framework.NewCycleState()
	if _, status := p.PreFilter(ctx, state, preemptor, nil); status.IsSuccess() {
		b.Fatal("the preemptor was admitted: want it refused at the capability")
	}
	infos := make([]fwk.PodInfo, victims)
	for i, obj := range objs[1:] {
		var err error
		if infos[i], err = framework.NewPodInfo(obj.(*v1.Pod)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		s := state.Clone()
		p.RemovePod(ctx, s, preemptor, infos[i%victims], nil)
		p.Filter(ctx, s, preemptor, nil)
	}
}

// The pods of a Suspended queue are QueueState's to hold. A pod that came past QueueState's gate
// while the snapshot still has its queue Suspended (the gate reads the queue's informer store, which
// is updated before the accounting hears of the change) is held, not sent on to be refused by
// PreFilter on the snapshot's older state, and let in again by the computation of the shares that
// the accounting's handling of the change brings.
func TestPodPastTheGateOfAQueueTheSnapshotHasSuspended(t *testing.T) {
	pod := util.MakePod("ns", "p").UID("p").Label(schedulingv1beta1.QueueLabel, "paused").Obj()
	acct := newTestAccountingWith(t, []runtime.Object{pod}, util.MakeQueue("root").Obj(),
		util.MakeQueue("paused").State(schedulingv1beta1.QueueStateSuspended).Obj())
	if err := wait.PollUntilContextTimeout(context.Background(), time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		q := acct.Snapshot().Queue("paused")
		return q != nil && q.Suspended, nil
	}); err != nil {
		t.Fatal("the snapshot never held the queue")
	}
	handle := &activations{}
	p := newTestPlugin(acct, handle)
	acct.Events.SharesComputed.SubscribeSignal(p.letInChanged) // as New registers it
	if why := p.hold(pod, "paused"); why.Message != "" {
		t.Fatalf("hold of a pod of a Suspended queue: %+v; want it left to QueueState", why)
	}
	// The queue opens in the informer's store; the accounting has not heard of it.
	store := acct.Informers.Scheduling().V1beta1().Queues().Informer().GetIndexer()
	opened := util.MakeQueue("paused").Obj()
	opened.Spec.State = schedulingv1beta1.QueueStateOpen
	if err := store.Update(opened); err != nil {
		t.Fatal(err)
	}
	if !acct.Snapshot().Queue("paused").Suspended {
		t.Fatal("the snapshot took in a change the accounting did not hear of")
	}
	if why := p.hold(pod, "paused"); why.Message == "" {
		t.Fatalf("hold: %+v; want the pod held until the snapshot takes in the change", why)
	}
	// The change reaches the accounting's handler: the snapshot built on it lets the pod in.
	written := opened.DeepCopy() // the store holds opened itself
	written.Generation = 2
	if _, err := acct.Client.SchedulingV1beta1().Queues().Update(context.Background(), written, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(context.Background(), time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
		return slices.Contains(handle.names(), "p"), nil
	}); err != nil {
		t.Errorf("the computation of the shares let in %v; want the held pod", handle.names())
	}
}
