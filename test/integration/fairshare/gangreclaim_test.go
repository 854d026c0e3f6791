package fairshare

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// submitGang creates a PodGroup of minMember members of 5 CPUs each in queue, members labelled with
// the queue too so that boundCPU counts them.
func submitGang(t *testing.T, queue, group string, members int) {
	t.Helper()
	createPodGroup(t, util.MakePodGroup(ns, group).MinMember(int32(members)).Queue(queue).Obj())
	for i := range members {
		createPod(t, util.MakePod(ns, fmt.Sprintf("%s-%d", group, i)).Label(schedulingv1beta1.PodGroupLabel, group).
			Label(schedulingv1beta1.QueueLabel, queue).Req(map[v1.ResourceName]string{v1.ResourceCPU: "5"}).Obj())
	}
}

// bindings watches the namespace's pods and records, in order, every pod as it binds from the
// watch's start on.
type bindings struct {
	bound chan string
}

func watchBindings(t *testing.T) *bindings {
	t.Helper()
	w, err := cluster.Kube.CoreV1().Pods(ns).Watch(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b := &bindings{bound: make(chan string, 1000)}
	go func() {
		// placed holds the pods seen on a node: those the watch starts with (its first events add
		// every pod as it stands) are not bound from then on, and a pod binds once.
		placed := map[string]bool{}
		for ev := range w.ResultChan() {
			pod, ok := ev.Object.(*v1.Pod)
			if !ok || pod.Spec.NodeName == "" || placed[pod.Name] {
				continue
			}
			placed[pod.Name] = true
			if ev.Type == watch.Modified {
				b.bound <- pod.Name
			}
		}
	}()
	t.Cleanup(w.Stop)
	return b
}

// The scenario on the test cluster: two queues of weight 1 share 60 CPUs; the borrower's
// 1-CPU pods fill the whole idle cluster, with 10 more waiting; the owner then submits one gang of
// 6 × 5 CPUs, exactly its deserved 30. The gang runs whole (the borrower's waiting pods
// do not take the room freed for it), the borrower is left at its deserved 30, no more than the 30
// CPUs the gang needs are evicted, and nothing more is evicted for 30 s of steady demand after.
func TestGangReclaimsItsShare(t *testing.T) {
	withQueues(t, util.MakeQueue("borrower").Obj(), util.MakeQueue("owner").Obj())
	submit(t, "borrower", nodes*nodeCPU+10, "1")
	waitAllocation(t, "the borrower holding the cluster", func(a map[string]int64) bool { return a["borrower"] == nodes*nodeCPU })
	evicted := watchEvictions(t)
	bound := watchBindings(t)

	start := time.Now()
	submitGang(t, "owner", "trainer", 6)
	// Every pod bound from the gang's submission on, in order: the gang's 6 members, and none of the
	// borrower's waiting pods, which must not take the room reclaim frees for the gang.
	var order []string
	members := 0
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(context.Context) (bool, error) {
		for {
			select {
			case name := <-bound.bound:
				order = append(order, name)
				if strings.HasPrefix(name, "trainer-") {
					members++
				}
			default:
				return members == 6, nil
			}
		}
	})
	if err != nil {
		t.Fatalf("the gang had %d of 6 members bound (bindings in order: %v); allocation %v; waiting %v",
			members, order, boundCPU(t), waitingReasons(t))
	}
	if len(order) != 6 {
		t.Errorf("bindings from the gang's submission to its last member: %v; want only the gang's 6 members", order)
	}
	t.Logf("gang bound whole %s after submission", time.Since(start).Round(time.Millisecond))
	waitAllocation(t, "30/30", func(a map[string]int64) bool { return a["borrower"] == 30 && a["owner"] == 30 })
	victims := evicted.drain(t)
	if len(victims) > 30 {
		t.Errorf("%d pods evicted for a gang of 30 CPUs: %v", len(victims), victims)
	}
	wantOnlyVictims(t, victims, "borrower-", "the borrower's pods")
	wantSteady(t, evicted)
}

// Two queues below their share each submit a gang against one borrower: both gangs run, and the
// evictions are no more than 1.05 × the pods the two gangs take back.
func TestTwoGangsReclaimFromOneBorrower(t *testing.T) {
	withQueues(t, util.MakeQueue("borrower").Obj(), util.MakeQueue("owner").Obj(), util.MakeQueue("second").Obj())
	submit(t, "borrower", nodes*nodeCPU, "1")
	waitAllocation(t, "the borrower holding the cluster", func(a map[string]int64) bool { return a["borrower"] == nodes*nodeCPU })
	evicted := watchEvictions(t)
	// Three queues of weight 1 on 60 CPUs: each deserves 20, each gang is 4 × 5 CPUs.
	submitGang(t, "owner", "first-gang", 4)
	submitGang(t, "second", "second-gang", 4)
	waitAllocationOf(t, "both gangs running", func(b map[string]int) bool { return b["first-gang"] == 4 && b["second-gang"] == 4 })
	waitAllocation(t, "20/20/20", func(a map[string]int64) bool { return a["borrower"] == 20 && a["owner"] == 20 && a["second"] == 20 })
	if victims := evicted.drain(t); len(victims) > 42 {
		t.Errorf("%d pods evicted to take back 40: %v", len(victims), victims)
	}
}

// A gang that asks for more than its queue's deserved share evicts nothing and says why, with the
// numbers, on its PodGroup.
func TestGangAboveItsShareEvictsNothing(t *testing.T) {
	withQueues(t, util.MakeQueue("borrower").Obj(), util.MakeQueue("owner").Obj())
	submit(t, "borrower", nodes*nodeCPU, "1")
	waitAllocation(t, "the borrower holding the cluster", func(a map[string]int64) bool { return a["borrower"] == nodes*nodeCPU })
	evicted := watchEvictions(t)

	submitGang(t, "owner", "too-big", 8)
	waitUnschedulable(t, "too-big", `reclaim cannot help: podgroup fairshare/too-big: queue "owner" holds cpu=0 of its deserved share cpu=30: with cpu=40 more`)
	if victims := evicted.drain(t); len(victims) > 0 {
		t.Fatalf("a gang above its share evicted %v", victims)
	}
	if a := boundCPU(t); a["borrower"] != nodes*nodeCPU || a["owner"] != 0 {
		t.Fatalf("allocation moved: %v", a)
	}
}

// gangMember is member i of group in queue, of cpu CPUs, with the priority class, on the gang nodes.
func gangMember(queue, group, class string, i int, cpu string) *v1.Pod {
	pod := util.MakePod(ns, fmt.Sprintf("%s-%d", group, i)).Label(schedulingv1beta1.PodGroupLabel, group).
		Label(schedulingv1beta1.QueueLabel, queue).NodeSelector(map[string]string{gangLabel: "true"}).
		Req(map[v1.ResourceName]string{v1.ResourceCPU: cpu}).Obj()
	pod.Spec.PriorityClassName = class
	return pod
}

// Over-eviction: two tight low-priority gangs fill the two gang nodes; a high-priority gang of 2 of
// the same queue takes exactly one of them, whole, leaves the other untouched, and nothing idles.
func TestHighPriorityGangTakesOneWholeGang(t *testing.T) {
	twoTightLowGangs(t)
	evicted := watchEvictions(t)
	createPodGroup(t, util.MakePodGroup(ns, "high").MinMember(2).Queue("solo").Obj())
	for i := range 2 {
		createPod(t, gangMember("solo", "high", "high", i, "5"))
	}
	waitAllocationOf(t, "the high gang running", func(b map[string]int) bool { return b["high"] == 2 })
	wantOneLowGangTaken(t, evicted)
}

// The same with two single high-priority pods one right after the other: the second waits for the
// room the first one's victims free instead of evicting the other gang too.
func TestConcurrentPreemptorsTakeOneWholeGang(t *testing.T) {
	twoTightLowGangs(t)
	evicted := watchEvictions(t)
	for i := range 2 {
		pod := gangMember("solo", "", "high", i, "5")
		pod.Name = fmt.Sprintf("single-high-%d", i)
		delete(pod.Labels, schedulingv1beta1.PodGroupLabel)
		createPod(t, pod)
	}
	if err := util.WaitForPods(context.Background(), cluster.Kube, ns, []string{"single-high-0", "single-high-1"}, settle, "bound", util.IsBound); err != nil {
		t.Fatal(err)
	}
	wantOneLowGangTaken(t, evicted)
}

// twoTightLowGangs fills the two gang nodes with two low-priority gangs of 2 × 5 CPUs of queue solo.
func twoTightLowGangs(t *testing.T) {
	t.Helper()
	onGangNodes(t)
	withPriorityClasses(t)
	withQueues(t, util.MakeQueue("solo").Obj())
	for _, g := range []string{"low-a", "low-b"} {
		createPodGroup(t, util.MakePodGroup(ns, g).MinMember(2).Queue("solo").Obj())
		for i := range 2 {
			createPod(t, gangMember("solo", g, "low", i, "5"))
		}
	}
	waitAllocationOf(t, "both low gangs running", func(b map[string]int) bool { return b["low-a"] == 2 && b["low-b"] == 2 })
}

// wantOneLowGangTaken checks that exactly the two members of one low gang were evicted and the other
// gang still runs whole.
func wantOneLowGangTaken(t *testing.T, evicted *evictions) {
	t.Helper()
	victims := evicted.drain(t)
	b := boundMembers(t)
	if len(victims) != 2 || victims[0][:len("low-")] != "low-" || victims[0][:5] != victims[1][:5] {
		t.Errorf("evicted %v; want the two members of one low gang", victims)
	}
	if oneWhole := (b["low-a"] == 2 && b["low-b"] == 0) || (b["low-a"] == 0 && b["low-b"] == 2); !oneWhole {
		t.Errorf("bound members %v; want one low gang whole and the other gone", b)
	}
}

// A queue that turns reclaimable lets the gang waiting for its share take it back on that change:
// the package's Gang backoff outlasts the wait, so the gang cannot run because its denial lapsed,
// and the scheduler's flush of unschedulable pods (5 min) comes later still.
func TestGangReclaimsOnceTheBorrowerTurnsReclaimable(t *testing.T) {
	withQueues(t, util.MakeQueue("borrower").Reclaimable(false).Obj(), util.MakeQueue("owner").Obj())
	submit(t, "borrower", nodes*nodeCPU, "1")
	waitAllocation(t, "the borrower holding the cluster", func(a map[string]int64) bool { return a["borrower"] == nodes*nodeCPU })
	submitGang(t, "owner", "trainer", 6)
	waitUnschedulable(t, "trainer", "no reclaimable queue holds more than its share")

	if _, err := cluster.Queues.SchedulingV1beta1().Queues().Patch(context.Background(), "borrower", types.MergePatchType,
		[]byte(`{"spec":{"reclaimable":true}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	turned := time.Now()
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(context.Context) (bool, error) {
		return boundMembers(t)["trainer"] == 6, nil
	})
	t.Logf("gang running %s after the borrower turned reclaimable", time.Since(turned).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("the gang not running after the borrower turned reclaimable; allocation %v; waiting %v", boundCPU(t), waitingReasons(t))
	}
}

// A PodDisruptionBudget that allows fewer evictions than the gang needs: nothing is evicted (not
// the few the budget allows, for a gang that still could not run), and the PodGroup says why.
func TestGangReclaimKeepsDisruptionBudgets(t *testing.T) {
	withQueues(t, util.MakeQueue("borrower").Obj(), util.MakeQueue("owner").Obj())
	for i := range nodes * nodeCPU {
		createPod(t, util.MakePod(ns, fmt.Sprintf("borrower-%d", i)).Label(schedulingv1beta1.QueueLabel, "borrower").
			Label("app", "borrowed").Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj())
	}
	waitAllocation(t, "the borrower holding the cluster", func(a map[string]int64) bool { return a["borrower"] == nodes*nodeCPU })
	budget(t, "borrowed", 10)
	evicted := watchEvictions(t)
	submitGang(t, "owner", "trainer", 6)
	waitUnschedulable(t, "trainer", "even after evicting all that reclaim and preemption may take")
	if victims := evicted.drain(t); len(victims) > 0 {
		t.Fatalf("evicted %v under a budget that could not let the gang run", victims)
	}
}

// budget creates a PodDisruptionBudget over the pods labelled app=<app> that allows the given
// evictions; with no disruption controller in the test cluster, the test writes its status.
func budget(t *testing.T, app string, allowed int32) {
	t.Helper()
	ctx := context.Background()
	api := cluster.Kube.PolicyV1().PodDisruptionBudgets(ns)
	pdb, err := api.Create(ctx, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: app},
		Spec: policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
			MaxUnavailable: ptr.To(intstr.FromInt32(allowed))}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = api.Delete(context.Background(), app, metav1.DeleteOptions{}) })
	pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation, DisruptionsAllowed: allowed,
		CurrentHealthy: 60, DesiredHealthy: 60 - allowed, ExpectedPods: 60}
	if _, err := api.UpdateStatus(ctx, pdb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The scheduler reads budgets from its informer: wait until it holds the status.
	err = wait.PollUntilContextTimeout(ctx, util.PollInterval, settle, true, func(context.Context) (bool, error) {
		got, err := cluster.SchedulerInformers().Policy().V1().PodDisruptionBudgets().Lister().PodDisruptionBudgets(ns).Get(app)
		return err == nil && got.Status.DisruptionsAllowed == allowed, nil
	})
	if err != nil {
		t.Fatal("the scheduler never saw the budget")
	}
}

// Within one queue, a high-priority gang preempts the queue's own lower-priority pods, and nothing
// of a queue that holds no more than its share.
func TestHighPriorityGangPreemptsWithinItsQueue(t *testing.T) {
	withPriorityClasses(t)
	withQueues(t, util.MakeQueue("team").Obj(), util.MakeQueue("other").Obj())
	submitWith(t, "team", "low", 30)
	submitWith(t, "other", "low", 30)
	waitAllocation(t, "30/30", func(a map[string]int64) bool { return a["team"] == 30 && a["other"] == 30 })
	evicted := watchEvictions(t)
	createPodGroup(t, util.MakePodGroup(ns, "urgent").MinMember(4).Queue("team").Obj())
	for i := range 4 {
		pod := util.MakePod(ns, fmt.Sprintf("urgent-%d", i)).Label(schedulingv1beta1.PodGroupLabel, "urgent").
			Label(schedulingv1beta1.QueueLabel, "team").Req(map[v1.ResourceName]string{v1.ResourceCPU: "5"}).Obj()
		pod.Spec.PriorityClassName = "high"
		createPod(t, pod)
	}
	waitAllocationOf(t, "the urgent gang running", func(b map[string]int) bool { return b["urgent"] == 4 })
	victims := evicted.drain(t)
	if len(victims) != 20 {
		t.Errorf("%d pods evicted for a gang of 20 CPUs: %v", len(victims), victims)
	}
	wantOnlyVictims(t, victims, "team-low-", "the team's own low-priority pods")
	if a := boundCPU(t); a["other"] != 30 || a["team"] != 30 {
		t.Errorf("allocation %v; want the team at 30 with its gang, the other queue untouched at 30", a)
	}
}

// Two resources: queue X holds twice its memory share and much less cpu than its share; queue Y,
// below its memory share, takes memory back from X's lowest-priority pods, down to X's memory share
// and no further, although each victim also holds a little of the cpu X is under its share in.
func TestReclaimTakesBackMemoryFromAQueueUnderItsCPUShare(t *testing.T) {
	withPriorityClasses(t)
	withQueues(t, util.MakeQueue("x").Obj(), util.MakeQueue("y").Obj())
	memoryPods := func(queue, class string, count int) {
		for i := range count {
			pod := util.MakePod(ns, fmt.Sprintf("%s-%s-%d", queue, class, i)).Label(schedulingv1beta1.QueueLabel, queue).
				Req(map[v1.ResourceName]string{v1.ResourceCPU: "10m", v1.ResourceMemory: "32Gi"}).Obj()
			pod.Spec.PriorityClassName = class
			createPod(t, pod)
		}
	}
	// 6 nodes × 64Gi hold 12 pods of 32Gi.
	memoryPods("x", "low", 6)
	memoryPods("x", "high", 6)
	waitBoundPods(t, "x holding all the memory", func(b map[string]int) bool { return b["x"] == 12 })
	evicted := watchEvictions(t)
	memoryPods("y", "low", 12)
	waitBoundPods(t, "6/6", func(b map[string]int) bool { return b["x"] == 6 && b["y"] == 6 })
	victims := evicted.drain(t)
	if len(victims) != 6 {
		t.Errorf("%d pods evicted, want X's 6 above its memory share: %v", len(victims), victims)
	}
	wantOnlyVictims(t, victims, "x-low-", "X's low-priority pods")
}

// waitBoundPods polls until ok holds for the bound pods per queue label.
func waitBoundPods(t *testing.T, what string, ok func(map[string]int) bool) {
	t.Helper()
	var last map[string]int
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		list, err := cluster.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		last = map[string]int{}
		for _, p := range list.Items {
			if p.Spec.NodeName != "" && p.DeletionTimestamp == nil {
				last[p.Labels[schedulingv1beta1.QueueLabel]]++
			}
		}
		return ok(last), nil
	})
	if err != nil {
		t.Fatalf("bound pods never %s: last %v; waiting pods: %v", what, last, waitingReasons(t))
	}
}

// surplusRuns is how often the concurrent-preemption test below is played.
const surplusRuns = 50

// tightLabel marks the node the tight gang of the surplus test runs on.
const tightLabel = "tight-gang-test"

// labelNode sets label=true on the node for the test.
func labelNode(t *testing.T, node, label string) {
	t.Helper()
	patch := func(value string) error {
		_, err := cluster.Kube.CoreV1().Nodes().Patch(context.Background(), node, types.MergePatchType,
			[]byte(fmt.Sprintf(`{"metadata":{"labels":{%q:%s}}}`, label, value)), metav1.PatchOptions{})
		return err
	}
	if err := patch(`"true"`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := patch("null"); err != nil {
			t.Error(err)
		}
	})
}

// Surplus first, whatever the interleaving and the priorities: the borrower runs an elastic gang
// (10 × 5 CPUs, minMember 8) of high priority and a tight one (2 × 5 CPUs) of low priority; the
// owner's two 5-CPU pods arrive together and reclaim concurrently. Each time, the elastic gang's two
// surplus members go, and the tight gang, though lower in priority and alone on a node where taking
// it whole would make room for both, is untouched.
func TestSurplusMembersGoFirstUnderConcurrentPreemption(t *testing.T) {
	withPriorityClasses(t)
	withQueues(t, util.MakeQueue("borrower").Obj(), util.MakeQueue("owner").Obj())
	labelNode(t, fmt.Sprintf("node-%d", nodes-1), tightLabel)
	member := func(group string, i int) *v1.Pod {
		pod := util.MakePod(ns, fmt.Sprintf("%s-%d", group, i)).Label(schedulingv1beta1.PodGroupLabel, group).
			Label(schedulingv1beta1.QueueLabel, "borrower").Req(map[v1.ResourceName]string{v1.ResourceCPU: "5"}).Obj()
		pod.Spec.PriorityClassName = map[string]string{"elastic": "high", "tight": "low"}[group]
		return pod
	}
	for run := range surplusRuns {
		// The tight gang alone on the last node, where taking it whole would make room for both.
		createPodGroup(t, util.MakePodGroup(ns, "tight").MinMember(2).Queue("borrower").Obj())
		for i := range 2 {
			pod := member("tight", i)
			pod.Spec.NodeSelector = map[string]string{tightLabel: "true"}
			createPod(t, pod)
		}
		waitAllocationOf(t, "the tight gang running", func(b map[string]int) bool { return b["tight"] == 2 })
		createPodGroup(t, util.MakePodGroup(ns, "elastic").MinMember(8).Queue("borrower").Obj())
		for i := range 10 {
			createPod(t, member("elastic", i))
		}
		waitAllocationOf(t, "both borrower gangs running", func(b map[string]int) bool { return b["elastic"] == 10 && b["tight"] == 2 })
		last := submit(t, "owner", 2, "5")
		if err := util.WaitForPods(context.Background(), cluster.Kube, ns, []string{"owner-0", last}, settle, "bound", util.IsBound); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		if b := boundMembers(t); b["elastic"] != 8 || b["tight"] != 2 {
			t.Fatalf("run %d: bound members %v; want the elastic gang at its minMember 8 and the tight gang whole", run, b)
		}
		deleteAllPods(t)
	}
}

// A gang reclaiming from a queue whose pods are a gang and single pods: the single pods and the
// victim gang's members above its minMember go, and the victim gang keeps its minMember.
func TestGangReclaimKeepsVictimGangsAtMinMember(t *testing.T) {
	withQueues(t, util.MakeQueue("borrower").Obj(), util.MakeQueue("owner").Obj())
	createPodGroup(t, util.MakePodGroup(ns, "elastic").MinMember(6).Queue("borrower").Obj())
	for i := range 8 {
		createPod(t, util.MakePod(ns, fmt.Sprintf("elastic-%d", i)).Label(schedulingv1beta1.PodGroupLabel, "elastic").
			Label(schedulingv1beta1.QueueLabel, "borrower").Req(map[v1.ResourceName]string{v1.ResourceCPU: "5"}).Obj())
	}
	waitAllocationOf(t, "elastic gang running", func(b map[string]int) bool { return b["elastic"] == 8 })
	submit(t, "borrower", 20, "1")
	waitAllocation(t, "the borrower holding the cluster", func(a map[string]int64) bool { return a["borrower"] == nodes*nodeCPU })
	// The owner's gang deserves 30: the 20 single pods and 2 of the elastic gang's 8 members make room.
	submitGang(t, "owner", "trainer", 6)
	waitAllocationOf(t, "the owner's gang running", func(b map[string]int) bool { return b["trainer"] == 6 })
	if b := boundMembers(t); b["elastic"] != 6 {
		t.Fatalf("the elastic gang has %d members bound, want its minMember 6", b["elastic"])
	}
	if a := boundCPU(t); a["borrower"] != 30 || a["owner"] != 30 {
		t.Fatalf("allocation %v; want 30/30", a)
	}
}

// A member reserved at Permit times out while the victims evicted for its gang are still leaving
// (held by a finalizer here, a long grace period on a real node): once the victims are gone the gang
// runs whole without a second round of evictions, though the borrower has pods waiting for room.
func TestGangKeepsItsRoomWhileSlowVictimsLeave(t *testing.T) {
	withQueues(t, util.MakeQueue("borrower").Obj(), util.MakeQueue("owner").Obj())
	// 11 pods of 5 CPUs leave one 5-CPU slot idle.
	for i := range 11 {
		pod := util.MakePod(ns, fmt.Sprintf("borrower-%d", i)).Label(schedulingv1beta1.QueueLabel, "borrower").
			Req(map[v1.ResourceName]string{v1.ResourceCPU: "5"}).Obj()
		pod.Finalizers = []string{slowExit}
		createPod(t, pod)
	}
	waitAllocation(t, "the borrower holding all but 5 CPUs", func(a map[string]int64) bool { return a["borrower"] == 55 })
	t.Cleanup(func() { releaseFinalizers(t) })
	evicted := watchEvictions(t)
	// One member reserves the idle slot and waits at Permit for 2 s; the other five need reclaim.
	createPodGroup(t, util.MakePodGroup(ns, "trainer").MinMember(6).Queue("owner").ScheduleTimeout(2).Obj())
	for i := range 6 {
		createPod(t, util.MakePod(ns, fmt.Sprintf("trainer-%d", i)).Label(schedulingv1beta1.PodGroupLabel, "trainer").
			Label(schedulingv1beta1.QueueLabel, "owner").Req(map[v1.ResourceName]string{v1.ResourceCPU: "5"}).Obj())
	}
	waitUnschedulable(t, "trainer", "timed out after 2s")
	// More borrower demand, ready to take any room the gang does not hold.
	for i := range 2 {
		createPod(t, util.MakePod(ns, fmt.Sprintf("late-%d", i)).Label(schedulingv1beta1.QueueLabel, "borrower").
			Req(map[v1.ResourceName]string{v1.ResourceCPU: "5"}).Obj())
	}
	releaseFinalizers(t)
	waitAllocationOf(t, "the gang running", func(b map[string]int) bool { return b["trainer"] == 6 })
	if victims := evicted.drain(t); len(victims) > 5 {
		t.Errorf("%d pods evicted for the 25 CPUs (5 pods) the gang lacked: %v", len(victims), victims)
	}
}

// slowExit holds a victim after its eviction, as a long grace period on a real node would.
const slowExit = "queue-scheduler.io/test-slow-exit"

// releaseFinalizers removes slowExit from every pod of the namespace that carries it.
func releaseFinalizers(t *testing.T) {
	t.Helper()
	list, err := cluster.Kube.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range list.Items {
		if len(p.Finalizers) == 0 || p.Finalizers[0] != slowExit {
			continue
		}
		_, err := cluster.Kube.CoreV1().Pods(ns).Patch(context.Background(), p.Name, types.JSONPatchType,
			[]byte(`[{"op":"remove","path":"/metadata/finalizers"}]`), metav1.PatchOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
}
