package fairshare

import (
	"context"
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// gangLabel marks the two nodes gang tests run on: 2 × 10 CPUs fit 8 pods of 2.5 CPUs.
const gangLabel = "gang-test"

// onGangNodes labels two nodes for the test and removes the label after it.
func onGangNodes(t *testing.T) {
	t.Helper()
	label := func(value string) {
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%s}}}`, gangLabel, value)
		for i := range 2 {
			if _, err := cluster.Kube.CoreV1().Nodes().Patch(context.Background(), fmt.Sprintf("node-%d", i),
				types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	label(`"true"`)
	t.Cleanup(func() { label("null") })
}

// createPodGroup creates a PodGroup in queue.
func createPodGroup(t *testing.T, pg *schedulingv1beta1.PodGroup) {
	t.Helper()
	if _, err := cluster.Queues.SchedulingV1beta1().PodGroups(ns).Create(context.Background(), pg, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create podgroup %s: %v", pg.Name, err)
	}
}

// gangPod is member i of group, 2.5 CPUs, on the gang nodes.
func gangPod(group string, i int) *v1.Pod {
	return util.MakePod(ns, fmt.Sprintf("%s-%d", group, i)).Label(schedulingv1beta1.PodGroupLabel, group).
		NodeSelector(map[string]string{gangLabel: "true"}).Req(map[v1.ResourceName]string{v1.ResourceCPU: "2500m"}).Obj()
}

func createPod(t *testing.T, pod *v1.Pod) {
	t.Helper()
	if _, err := cluster.Kube.CoreV1().Pods(ns).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod %s: %v", pod.Name, err)
	}
}

// boundMembers counts the bound pods of each PodGroup.
func boundMembers(t *testing.T) map[string]int {
	t.Helper()
	list, err := cluster.Kube.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return util.BoundPerPodGroup(list.Items)
}

// waitUnschedulable waits for the PodGroup's Unschedulable condition to contain text.
func waitUnschedulable(t *testing.T, group, text string) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		pg, err := cluster.Queues.SchedulingV1beta1().PodGroups(ns).Get(ctx, group, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		c := meta.FindStatusCondition(pg.Status.Conditions, schedulingv1beta1.PodGroupUnschedulable)
		if c == nil {
			return false, nil
		}
		last = c.Message
		return c.Status == metav1.ConditionTrue && strings.Contains(c.Message, text), nil
	})
	if err != nil {
		t.Fatalf("podgroup %s never Unschedulable with %q; last message %q", group, text, last)
	}
}

// Two gangs of minMember 6 on nodes that fit 8 such pods: one runs whole, the other has zero pods
// bound, and runs whole once the first finishes; members created interleaved give the same result.
func TestTwoGangsRunOneAfterTheOther(t *testing.T) {
	for _, interleaved := range []bool{false, true} {
		t.Run(fmt.Sprintf("interleaved=%t", interleaved), func(t *testing.T) {
			withQueues(t, util.MakeQueue("gangs").Obj())
			onGangNodes(t)
			for _, g := range []string{"ga", "gb"} {
				createPodGroup(t, util.MakePodGroup(ns, g).MinMember(6).Queue("gangs").ScheduleTimeout(30).Obj())
			}
			for i := range 6 {
				if interleaved {
					createPod(t, gangPod("ga", i))
					createPod(t, gangPod("gb", i))
				}
			}
			for _, g := range []string{"ga", "gb"} {
				for i := range 6 {
					if !interleaved {
						createPod(t, gangPod(g, i))
					}
				}
			}
			first, second := waitOneGangWhole(t)
			waitUnschedulable(t, second, "tasks in gang unschedulable")
			if got := boundMembers(t)[second]; got != 0 {
				t.Fatalf("gang %s has %d pods bound beside gang %s; want 0", second, got, first)
			}
			deleteMembers(t, first)
			waitAllocationOf(t, second+" whole", func(b map[string]int) bool { return b[second] == 6 })
		})
	}
}

// waitOneGangWhole waits until one of ga and gb has its 6 pods bound, and names it first.
func waitOneGangWhole(t *testing.T) (string, string) {
	t.Helper()
	var b map[string]int
	waitAllocationOf(t, "one gang whole", func(got map[string]int) bool {
		b = got
		return got["ga"] == 6 || got["gb"] == 6
	})
	if b["ga"] == 6 {
		return "ga", "gb"
	}
	return "gb", "ga"
}

func waitAllocationOf(t *testing.T, what string, ok func(map[string]int) bool) {
	t.Helper()
	var last map[string]int
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(context.Context) (bool, error) {
		last = boundMembers(t)
		return ok(last), nil
	})
	if err != nil {
		t.Fatalf("bound members never %s: last %v; waiting pods: %v", what, last, waitingReasons(t))
	}
}

func deleteMembers(t *testing.T, group string) {
	t.Helper()
	err := cluster.Kube.CoreV1().Pods(ns).DeleteCollection(context.Background(), metav1.DeleteOptions{},
		metav1.ListOptions{LabelSelector: schedulingv1beta1.PodGroupLabel + "=" + group})
	if err != nil {
		t.Fatal(err)
	}
}

// wholeNodePod needs a whole gang node. It has the higher priority, so that what it tests is what is
// reserved (assumed on a node), not a rejected member's nomination, which only pods of the same or
// lower priority respect and which the API may briefly keep after the member was rejected.
func wholeNodePod() *v1.Pod {
	pod := util.MakePod(ns, "whole-node").Label(schedulingv1beta1.QueueLabel, "gangs").
		NodeSelector(map[string]string{gangLabel: "true"}).Req(map[v1.ResourceName]string{v1.ResourceCPU: "10"}).Obj()
	pod.Spec.PriorityClassName = "high"
	return pod
}

// A gang that can never fit is rejected, and nothing of it stays reserved: a pod that needs a whole
// gang node binds.
func TestGangThatCannotFitReservesNothing(t *testing.T) {
	withPriorityClasses(t)
	withQueues(t, util.MakeQueue("gangs").Obj())
	onGangNodes(t)
	createPodGroup(t, util.MakePodGroup(ns, "huge").MinMember(10).Queue("gangs").ScheduleTimeout(5).Obj())
	for i := range 10 {
		createPod(t, gangPod("huge", i))
	}
	waitUnschedulable(t, "huge", "tasks in gang unschedulable: 0/6 nodes are available")
	wantNothingReserved(t, "huge")
}

// A gang whose last member never comes to scheduling (it is gated) is rejected after its timeout:
// the members that waited are released and none is bound.
func TestGangTimesOut(t *testing.T) {
	withPriorityClasses(t)
	withQueues(t, util.MakeQueue("gangs").Obj())
	onGangNodes(t)
	timeouts := metricNow(t, "queue_scheduler_gang_timeouts_total", map[string]string{"queue": "gangs"})
	createPodGroup(t, util.MakePodGroup(ns, "late").MinMember(3).Queue("gangs").ScheduleTimeout(2).Obj())
	for i := range 3 {
		pod := gangPod("late", i)
		if i == 2 {
			pod.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "example.com/never"}}
		}
		createPod(t, pod)
	}
	waitUnschedulable(t, "late", "timed out after 2s waiting for 3 members")
	wantNothingReserved(t, "late")
	if got := metricNow(t, "queue_scheduler_gang_timeouts_total", map[string]string{"queue": "gangs"}) - timeouts; got < 1 {
		t.Errorf("/metrics counts %v gang time-outs, want at least 1", got)
	}
}

// wantNothingReserved checks that a rejected gang holds nothing: a pod needing a whole gang node
// binds, and none of the gang's members is bound.
func wantNothingReserved(t *testing.T, group string) {
	t.Helper()
	createPod(t, wholeNodePod())
	if err := util.WaitForPods(context.Background(), cluster.Kube, ns, []string{"whole-node"}, settle, "bound", util.IsBound); err != nil {
		t.Fatal(err)
	}
	if got := boundMembers(t)[group]; got != 0 {
		t.Fatalf("%d members of the rejected gang %s were bound", got, group)
	}
}

// A PodGroup enters its queue (Pending → Inqueue) only when its minResources fit: until then its
// pods wait out of the active queue and the group says why; a larger capability lets it in. (Within
// the capability, but not beside what the queue already holds: minResources above the capability
// itself are refused at admission.)
func TestPodGroupAdmittedWhenMinResourcesFit(t *testing.T) {
	withQueues(t, util.MakeQueue("small").Capability(map[v1.ResourceName]string{v1.ResourceCPU: "12"}).Obj())
	createPod(t, util.MakePod(ns, "holder").Label(schedulingv1beta1.QueueLabel, "small").
		Req(map[v1.ResourceName]string{v1.ResourceCPU: "4"}).Obj())
	if err := util.WaitForPods(context.Background(), cluster.Kube, ns, []string{"holder"}, settle, "bound", util.IsBound); err != nil {
		t.Fatal(err)
	}
	createPodGroup(t, util.MakePodGroup(ns, "wide").MinMember(2).Queue("small").
		MinResources(map[v1.ResourceName]string{v1.ResourceCPU: "10"}).Obj())
	for i := range 2 {
		createPod(t, util.MakePod(ns, fmt.Sprintf("wide-%d", i)).Label(schedulingv1beta1.PodGroupLabel, "wide").
			Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj())
	}
	waitUnschedulable(t, "wide", `minResources do not fit: queue "small" would exceed its capability of cpu`)
	err := util.WaitForPods(context.Background(), cluster.Kube, ns, []string{"wide-0", "wide-1"}, settle, "held while Pending",
		util.HasUnschedulableMessage("podgroup fairshare/wide is Pending"))
	if err != nil {
		t.Fatal(err)
	}
	patch := []byte(`{"spec":{"capability":{"cpu":"20"}}}`)
	if _, err := cluster.Queues.SchedulingV1beta1().Queues().Patch(context.Background(), "small", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitAllocationOf(t, "both members bound", func(b map[string]int) bool { return b["wide"] == 2 })
}
