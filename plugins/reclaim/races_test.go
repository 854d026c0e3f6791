package reclaim

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"
	fwk "k8s.io/kube-scheduler/framework"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	internalqueue "k8s.io/kubernetes/pkg/scheduler/backend/queue"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultbinder"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/noderesources"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
	tf "k8s.io/kubernetes/pkg/scheduler/testing/framework"
	"k8s.io/kubernetes/test/utils/ktesting"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting/accountingtest"
	"github.com/queue-scheduler/queue-scheduler/pkg/gangs"
	"github.com/queue-scheduler/queue-scheduler/pkg/podindex"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// Two gangs of the owner's low-priority pods fill two 2-CPU nodes, one member of each gang on each
// node. A first preemptor's dry run on n1 took gang a whole, its member on n1 and its member on n2,
// and the first preemptor is nominated to n1. The API server applied the evictions and the
// accounting sees both members of gang a terminating, while the node snapshot of the next cycle,
// taken before the scheduler's cache heard of it, still shows them running. A second preemptor of
// the same priority tried in that cycle counts the room gang a frees: on n1 it is the first
// preemptor's, on n2 it is free. It is nominated to n2 and evicts nothing: gang a's member on n2 is
// not taken again, and gang b stays whole.
func TestASecondPreemptorWaitsForVictimsTheSnapshotStillShows(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	member := func(gang string, node string, started time.Time) *v1.Pod {
		name := gang + "-" + node
		p := util.MakePod("ns", name).UID(name).Label(schedulingv1beta1.PodGroupLabel, gang).Priority(0).
			Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Node(node).Obj()
		p.CreationTimestamp = metav1.NewTime(started)
		return p
	}
	// Gang a started last: of two gangs of one priority, it goes first.
	a1, a2 := member("a", "n1", clk.Now().Add(-time.Minute)), member("a", "n2", clk.Now().Add(-time.Minute))
	b1, b2 := member("b", "n1", clk.Now().Add(-time.Hour)), member("b", "n2", clk.Now().Add(-time.Hour))
	preemptor := func(name string) *v1.Pod {
		return util.MakePod("ns", name).UID(name).Label(schedulingv1beta1.QueueLabel, "owner").Priority(10).
			Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()
	}
	podGroup := func(name string) *schedulingv1beta1.PodGroup {
		pg := util.MakePodGroup("ns", name).MinMember(2).Queue("owner").Obj()
		pg.UID = types.UID("podgroup-" + name)
		return pg
	}
	first, second := preemptor("first"), preemptor("second")
	first.Status.NominatedNodeName = "n1"
	f := newNodesFixture(t, clk, []*v1.Node{util.MakeNode("n1", "2", "10Gi"), util.MakeNode("n2", "2", "10Gi")},
		[]*v1.Pod{a1, b1, a2, b2}, []*v1.Pod{first, second},
		podGroup("a"), podGroup("b"))
	r := f.reclaim
	executor := preemption.NewExecutor(f.framework, feature.Features{})
	executor.PreemptPod = r.evict
	r.evaluator = preemption.NewEvaluator(Name, f.framework, r, executor)
	evictions := recordEvictions(f.client)
	waitFor(t, f.ctx, "the gangs' members counted", func() bool {
		return r.acct.Pods.Holds(a1) && r.acct.Pods.Holds(a2) && r.acct.Pods.Holds(b1) && r.acct.Pods.Holds(b2) && r.acct.Pods.HasBoundBelow("owner", 10) &&
			len(r.acct.Gangs.Members("ns/a")) == 2 && len(r.acct.Gangs.Members("ns/b")) == 2
	})

	// The first preemptor's dry run on n1, as the Evaluator runs it, and its nomination there.
	p, why := r.newPlan(r.acct.Snapshot(), first, cpu("1"))
	if p == nil {
		t.Fatalf("no plan for the first preemptor: %s", why)
	}
	state := f.preFiltered(t, first)
	state.Write(planKey, p)
	n1, err := f.snapshot.NodeInfos().Get("n1")
	if err != nil {
		t.Fatal(err)
	}
	victims, _, status := r.SelectVictimsOnNode(f.ctx, state, first, n1.Snapshot(), nil, nil)
	if got := names(victims); !status.IsSuccess() || !slices.Equal(sorted(got), []string{"a-n1", "a-n2"}) {
		t.Fatalf("the first preemptor's victims: %v (%v), want gang a whole", got, status)
	}
	r.inflight.settle(first.UID, "n1")

	// The API server applies the evictions: the accounting sees gang a terminating. The node
	// snapshot, taken before, still shows its members running.
	for _, m := range []*v1.Pod{a1, a2} {
		deleting := m.DeepCopy()
		deleting.DeletionTimestamp = &metav1.Time{Time: clk.Now().Add(30 * time.Second)}
		deleting.DeletionGracePeriodSeconds = new(int64(30))
		if _, err := f.client.CoreV1().Pods("ns").Update(f.ctx, deleting, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, f.ctx, "the accounting sees gang a terminating", func() bool { return r.acct.Pods.Leaving(a1) && r.acct.Pods.Leaving(a2) })
	for _, node := range []string{"n1", "n2"} {
		info, err := f.snapshot.NodeInfos().Get(node)
		if err != nil {
			t.Fatal(err)
		}
		for _, pi := range info.GetPods() {
			if pi.GetPod().DeletionTimestamp != nil {
				t.Fatalf("the node snapshot shows %s terminating; it must still show it running", pi.GetPod().Name)
			}
		}
	}

	unschedulable := framework.NewDefaultNodeToStatus()
	unschedulable.Set("n1", fwk.NewStatus(fwk.Unschedulable))
	unschedulable.Set("n2", fwk.NewStatus(fwk.Unschedulable))
	result, status := r.PostFilter(f.ctx, f.preFiltered(t, second), second, unschedulable)
	if result == nil || result.Mode() != fwk.ModeOverride || result.NominatedNodeName != "n2" ||
		status.Message() != "reclaim: waiting for the pods leaving node n2 to make room" {
		t.Errorf("the second preemptor got %+v, %v; want it nominated to n2, where gang a's member leaves", result, status)
	}
	r.inflight.mu.Lock()
	var underWay []string
	for _, v := range r.inflight.victims {
		underWay = append(underWay, v.Name)
	}
	_, ownVictims := r.inflight.of[second.UID]
	r.inflight.mu.Unlock()
	if len(underWay) != 0 || ownVictims {
		t.Errorf("victims under way after the second preemptor: %v (its own: %v), want none", sorted(underWay), ownVictims)
	}
	if got := evictions(); len(got) != 0 {
		t.Errorf("evicted %v, want nothing more", got)
	}
}

// An eviction whose call ends in an error (its context ended) after the API server applied it: the
// victim is terminating, though its preemptor's eviction reported a failure. Once the accounting sees
// the victim terminating, the next dry run takes it as leaving, even on a node snapshot that still
// shows it running: its preemptor, tried again and still nominated to the node, finds its room
// there and evicts nothing, and a second preemptor takes only what it needs itself, neither the
// victim again nor a second victim in its place.
func TestAnEvictionCancelledAfterTheServerAppliedIt(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	victim, low, high := borrowerPod("victim", 1), borrowerPod("low", 1), borrowerPod("high", 100)
	victim.CreationTimestamp = metav1.NewTime(low.CreationTimestamp.Add(time.Minute)) // first in line
	first := pendingPod("first")
	first.Status.NominatedNodeName = "n"
	f := newNodeFixtureOn(t, accounting.Config{Clock: clk}, first, victim, low, high)
	r := f.reclaim
	r.inflight, r.clock = newInflight(clk), clk
	waitFor(t, f.ctx, "the pods on the node counted", func() bool {
		return r.acct.Pods.Holds(victim) && r.acct.Pods.Holds(low) && r.acct.Pods.Holds(high)
	})

	victims, status := f.selectVictims(t, first)
	if got := names(victims); !status.IsSuccess() || !slices.Equal(got, []string{"victim"}) {
		t.Fatalf("the first preemptor's victims: %v (%v), want [victim]", got, status)
	}
	r.inflight.settle(first.UID, "n")

	// The API server applies the eviction, then the call's context ends before its answer comes.
	ctx, cancel := context.WithCancel(f.ctx)
	defer cancel()
	f.client.PrependReactor("create", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
		create, ok := action.(k8stesting.CreateAction)
		if !ok || action.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		pods := v1.SchemeGroupVersion.WithResource("pods")
		obj, err := f.client.Tracker().Get(pods, action.GetNamespace(), create.GetObject().(metav1.Object).GetName())
		if err != nil {
			return true, nil, err
		}
		deleting := obj.(*v1.Pod).DeepCopy()
		deleting.DeletionTimestamp = &metav1.Time{Time: clk.Now().Add(30 * time.Second)}
		deleting.DeletionGracePeriodSeconds = new(int64(30))
		if err := f.client.Tracker().Update(pods, deleting, action.GetNamespace()); err != nil {
			return true, nil, err
		}
		cancel()
		return true, nil, ctx.Err()
	})
	if _, err := r.evict(ctx, failingCandidate{[]*v1.Pod{victim}}, podPreemptor{first}, victim, Name); err == nil {
		t.Fatal("the eviction whose context ended reported no error")
	}
	waitFor(t, f.ctx, "the accounting sees the victim terminating", func() bool { return r.acct.Pods.Leaving(victim) })
	if info, err := f.snapshot.NodeInfos().Get("n"); err != nil || !slices.ContainsFunc(info.GetPods(), func(pi fwk.PodInfo) bool {
		return pi.GetPod().UID == victim.UID && pi.GetPod().DeletionTimestamp == nil
	}) {
		t.Fatalf("the node snapshot must still show the victim running (%v)", err)
	}
	// The next plan reads the victims under way, as the accounting sees them, before its dry run.
	r.inflight.pending(r.victimState, r.acct.QueueOf, r.acct.Gangs.Key, f.snapshot.NodeInfos())

	// The first preemptor, tried again after its preemption failed, is still nominated to n.
	victims, status = f.selectVictims(t, first)
	if len(victims) != 0 || status.Code() != fwk.Unschedulable {
		t.Errorf("the first preemptor tried again: victims %v (%v), want none while its victim leaves", names(victims), status)
	}
	if node := r.roomBeingFreed(f.ctx, f.preFiltered(t, first), first, unschedulableOnN()); node != "n" {
		t.Errorf("room being freed for the first preemptor on %q, want n", node)
	}
	victims, status = f.selectVictims(t, pendingPod("second"))
	if got := names(victims); !status.IsSuccess() || !slices.Equal(got, []string{"low"}) {
		t.Errorf("a second preemptor's victims: %v (%v), want only [low]: the victim's room is the first preemptor's", got, status)
	}
}

// newNodesFixture is newNodeFixture on the nodes given, with the accounting and the plugin on clk:
// the bound pods are on the nodes (and in the node snapshot); the pending ones, in the API only, and
// those with a nominated node wait in the scheduling queue nominated there. objs are queue-scheduler
// objects (PodGroups) beside the queues borrower and owner.
func newNodesFixture(t *testing.T, clk clock.WithTickerAndDelayedExecution, nodes []*v1.Node, bound, pending []*v1.Pod, objs ...runtime.Object) *nodeFixture {
	t.Helper()
	logger, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	var kubeObjs []runtime.Object
	for _, n := range nodes {
		kubeObjs = append(kubeObjs, n)
	}
	for _, p := range append(slices.Clone(bound), pending...) {
		kubeObjs = append(kubeObjs, p)
	}
	client := kubefake.NewClientset(kubeObjs...)
	acct, kube := accountingtest.StartWith(ctx, t, client, accounting.Config{Clock: clk},
		append([]runtime.Object{util.MakeQueue("borrower").Obj(), util.MakeQueue("owner").Obj()}, objs...)...)
	snapshot := internalcache.NewSnapshot(bound, nodes)
	metrics.Register()
	nominator := internalqueue.NewSchedulingQueue(func(fwk.QueuedEntityInfo, fwk.QueuedEntityInfo) bool { return false }, kube)
	f, err := tf.NewFramework(ctx, []tf.RegisterPluginFunc{
		tf.RegisterQueueSortPlugin(queuesort.Name, queuesort.New),
		tf.RegisterPluginAsExtensions(noderesources.Name, frameworkruntime.FactoryAdapter(feature.Features{}, noderesources.NewFit), "Filter", "PreFilter"),
		tf.RegisterBindPlugin(defaultbinder.Name, defaultbinder.New),
	}, "",
		frameworkruntime.WithPodNominator(nominator),
		frameworkruntime.WithSnapshotSharedLister(snapshot),
		frameworkruntime.WithMutableSnapshotLister(snapshot),
		frameworkruntime.WithWaitingPods(frameworkruntime.NewWaitingPodsMap()),
		frameworkruntime.WithPodsInPreBind(frameworkruntime.NewPodsInPreBindMap()),
		frameworkruntime.WithClientSet(client),
		frameworkruntime.WithEventRecorder(events.NewFakeRecorder(100)),
		frameworkruntime.WithInformerFactory(kube),
		frameworkruntime.WithLogger(logger))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pending {
		if p.Status.NominatedNodeName == "" {
			continue
		}
		nominator.Add(ctx, p)
		pi, err := framework.NewPodInfo(p)
		if err != nil {
			t.Fatal(err)
		}
		nominator.AddNominatedPod(logger, pi, &fwk.NominatingInfo{NominatingMode: fwk.ModeOverride, NominatedNodeName: p.Status.NominatedNodeName})
	}
	return &nodeFixture{ctx: ctx, framework: f, snapshot: snapshot, client: client, informers: kube,
		reclaim: &Reclaim{handle: f, acct: acct, inflight: newInflight(clk), clock: clk,
			pods: kube.Core().V1().Pods().Lister(), waiting: podindex.New(), nominated: newNominated(schedulingv1beta1.PodGroupKey),
			attempts: gangs.NewAttempts(clk)}}
}

// recordEvictions makes the API accept every eviction and returns what lists the pods evicted so far.
func recordEvictions(client *kubefake.Clientset) func() []string {
	var mu sync.Mutex
	var evicted []string
	client.PrependReactor("create", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
		create, ok := action.(k8stesting.CreateAction)
		if !ok || action.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		mu.Lock()
		defer mu.Unlock()
		evicted = append(evicted, create.GetObject().(metav1.Object).GetName())
		return true, nil, nil
	})
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(evicted)
	}
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
