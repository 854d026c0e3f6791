package fairshare

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingapiv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// Gang members waiting at Permit hold their queue's room while the scheduler patches their
// nominatedNodeName: pods of the same queue that compete for its last capability get only what the
// waiting members leave, and the gang runs whole once its last member comes.
func TestMembersWaitingAtPermitKeepTheirQueueRoom(t *testing.T) {
	onGangNodes(t)
	withQueues(t, util.MakeQueue("capped").Capability(map[v1.ResourceName]string{v1.ResourceCPU: "10"}).Obj())
	createPodGroup(t, util.MakePodGroup(ns, "waits").MinMember(4).Queue("capped").ScheduleTimeout(120).Obj())
	members := make([]string, 0, 3)
	for i := range 4 {
		pod := gangPod("waits", i)
		if i == 3 {
			// The last member exists, so the gang may start, but is not scheduled yet: the others wait.
			pod.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "test/hold"}}
		} else {
			members = append(members, pod.Name)
		}
		createPod(t, pod)
	}
	err := util.WaitForPods(context.Background(), cluster.Kube, ns, members, settle, "nominated while waiting at Permit",
		func(p *v1.Pod) bool { return p.Spec.NodeName == "" && p.Status.NominatedNodeName != "" })
	if err != nil {
		t.Fatal(err)
	}

	// 7.5 of the queue's 10 CPUs are reserved by the waiting members: one competitor of 2.5 fits.
	competitors := make([]string, 0, 4)
	for i := range 4 {
		pod := util.MakePod(ns, fmt.Sprintf("competitor-%d", i)).Label(schedulingv1beta1.QueueLabel, "capped").
			NodeSelector(map[string]string{gangLabel: "true"}).Req(map[v1.ResourceName]string{v1.ResourceCPU: "2500m"}).Obj()
		createPod(t, pod)
		competitors = append(competitors, pod.Name)
	}
	err = util.WaitForPods(context.Background(), cluster.Kube, ns, competitors, settle, "bound or refused by the capability",
		func(p *v1.Pod) bool {
			c := util.PodScheduledCondition(p)
			return p.Spec.NodeName != "" || (c != nil && c.Status == v1.ConditionFalse && strings.Contains(c.Message, "capability"))
		})
	if err != nil {
		t.Fatal(err)
	}
	if bound := boundMembers(t)[""]; bound != 1 {
		t.Fatalf("%d competitors bound while 3 gang members hold 7.5 of the queue's 10 CPUs; want 1", bound)
	}
	if err := util.WaitForPods(context.Background(), cluster.Kube, ns, members, settle, "still waiting at Permit",
		func(p *v1.Pod) bool { return p.Spec.NodeName == "" }); err != nil {
		t.Fatal(err)
	}

	// The competitors go; the last member comes: the gang binds whole, within the capability.
	pods := cluster.Kube.CoreV1().Pods(ns)
	for _, name := range competitors {
		if err := pods.Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pods.Patch(context.Background(), "waits-3", types.StrategicMergePatchType,
		[]byte(`{"spec":{"schedulingGates":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitAllocationOf(t, "the whole gang bound", func(b map[string]int) bool { return b["waits"] == 4 && b[""] == 0 })
}

// An admitted PodGroup holds its minResources in its queue until its members hold them: another pod
// of the queue that would need the room waits, with a message naming the reservation, and gets it
// once the group is gone.
func TestAdmittedPodGroupKeepsItsRoom(t *testing.T) {
	onGangNodes(t)
	withQueues(t, util.MakeQueue("keeps").Capability(map[v1.ResourceName]string{v1.ResourceCPU: "10"}).Obj())
	createPodGroup(t, util.MakePodGroup(ns, "big").MinMember(2).Queue("keeps").
		MinResources(map[v1.ResourceName]string{v1.ResourceCPU: "8"}).Obj())
	waitAdmitted(t, "big")
	other := util.MakePod(ns, "other").Label(schedulingv1beta1.QueueLabel, "keeps").
		NodeSelector(map[string]string{gangLabel: "true"}).Req(map[v1.ResourceName]string{v1.ResourceCPU: "4"}).Obj()
	createPod(t, other)
	if err := util.WaitForPods(context.Background(), cluster.Kube, ns, []string{"other"}, settle, "refused for the reservation",
		util.HasUnschedulableMessage("8 reserved by admitted work")); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		createPod(t, util.MakePod(ns, fmt.Sprintf("big-%d", i)).Label(schedulingv1beta1.PodGroupLabel, "big").
			NodeSelector(map[string]string{gangLabel: "true"}).Req(map[v1.ResourceName]string{v1.ResourceCPU: "4"}).Obj())
	}
	waitAllocationOf(t, "the gang bound, the other pod not", func(b map[string]int) bool { return b["big"] == 2 && b[""] == 0 })
	deleteMembers(t, "big")
	if err := cluster.Queues.SchedulingV1beta1().PodGroups(ns).Delete(context.Background(), "big", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitAllocationOf(t, "the other pod bound", func(b map[string]int) bool { return b[""] == 1 })
}

// An admitted PodGroup whose members run holding less than its minResources gives back the rest:
// another pod of its queue, held at the queue's capability for the reservation, binds once the
// group is Running, with nothing else changing in the cluster.
func TestRunningPodGroupGivesBackItsRoom(t *testing.T) {
	onGangNodes(t)
	withQueues(t, util.MakeQueue("gives").Capability(map[v1.ResourceName]string{v1.ResourceCPU: "10"}).Obj())
	createPodGroup(t, util.MakePodGroup(ns, "small").MinMember(2).Queue("gives").
		MinResources(map[v1.ResourceName]string{v1.ResourceCPU: "8"}).Obj())
	waitAdmitted(t, "small")
	members := []string{"small-0", "small-1"}
	for _, name := range members {
		createPod(t, util.MakePod(ns, name).Label(schedulingv1beta1.PodGroupLabel, "small").
			NodeSelector(map[string]string{gangLabel: "true"}).Req(map[v1.ResourceName]string{v1.ResourceCPU: "2"}).Obj())
	}
	waitAllocationOf(t, "the gang bound", func(b map[string]int) bool { return b["small"] == 2 })
	// 4 held by the members, 4 still reserved: 4 more do not fit in 10.
	other := util.MakePod(ns, "other").Label(schedulingv1beta1.QueueLabel, "gives").
		NodeSelector(map[string]string{gangLabel: "true"}).Req(map[v1.ResourceName]string{v1.ResourceCPU: "4"}).Obj()
	createPod(t, other)
	if err := util.WaitForPods(context.Background(), cluster.Kube, ns, []string{"other"}, settle, "refused for the reservation",
		util.HasUnschedulableMessage("4 reserved by admitted work")); err != nil {
		t.Fatal(err)
	}
	setRunning(t, members)
	waitAllocationOf(t, "the other pod bound beside the running gang", func(b map[string]int) bool { return b[""] == 1 && b["small"] == 2 })
}

// Two PodGroups of sibling queues whose minResources do not fit their parent's capability together
// are admitted one at a time: the first keeps its room at the parent's capability, the second waits
// naming the parent, and enters once the first runs holding less than its minResources, with
// nothing changing in its own queue.
func TestSiblingGroupsShareTheirParentsCapability(t *testing.T) {
	onGangNodes(t)
	ten, eight := map[v1.ResourceName]string{v1.ResourceCPU: "10"}, map[v1.ResourceName]string{v1.ResourceCPU: "8"}
	withQueues(t, util.MakeQueue("sibs").Capability(ten).Obj(), util.MakeQueue("sibs-a").Parent("sibs").Capability(ten).Obj(),
		util.MakeQueue("sibs-b").Parent("sibs").Capability(ten).Obj())
	createPodGroup(t, util.MakePodGroup(ns, "first").MinMember(2).Queue("sibs-a").MinResources(eight).Obj())
	waitAdmitted(t, "first")
	createPodGroup(t, util.MakePodGroup(ns, "second").MinMember(2).Queue("sibs-b").MinResources(eight).Obj())
	waitUnschedulable(t, "second", `queue "sibs" would exceed its capability of cpu: 0 allocated + 8 reserved by admitted work + 8 requested > 10`)
	runSmallMembers(t, "first")
	waitAdmitted(t, "second")
}

// A pod of a sibling queue that an admitted PodGroup's reservation leaves no room for at the
// parent's capability waits, naming it, and binds once the group runs holding less.
func TestSiblingPodWaitsForTheParentsReservation(t *testing.T) {
	onGangNodes(t)
	ten := map[v1.ResourceName]string{v1.ResourceCPU: "10"}
	withQueues(t, util.MakeQueue("kin").Capability(ten).Obj(), util.MakeQueue("kin-a").Parent("kin").Capability(ten).Obj(),
		util.MakeQueue("kin-b").Parent("kin").Capability(ten).Obj())
	createPodGroup(t, util.MakePodGroup(ns, "first").MinMember(2).Queue("kin-a").
		MinResources(map[v1.ResourceName]string{v1.ResourceCPU: "8"}).Obj())
	waitAdmitted(t, "first")
	createPod(t, util.MakePod(ns, "other").Label(schedulingv1beta1.QueueLabel, "kin-b").
		NodeSelector(map[string]string{gangLabel: "true"}).Req(map[v1.ResourceName]string{v1.ResourceCPU: "4"}).Obj())
	if err := util.WaitForPods(context.Background(), cluster.Kube, ns, []string{"other"}, settle, "refused for the sibling's reservation",
		util.HasUnschedulableMessage(`queue "kin" would exceed its capability of cpu: 0 allocated + 8 reserved by admitted work + 4 requested > 10`)); err != nil {
		t.Fatal(err)
	}
	runSmallMembers(t, "first")
	waitAllocationOf(t, "the other pod bound beside the running gang", func(b map[string]int) bool { return b[""] == 1 })
}

// runSmallMembers creates the group's two members of one CPU each, waits for them to bind, and
// marks them Running: the group runs holding 2 CPU.
func runSmallMembers(t *testing.T, group string) {
	t.Helper()
	members := []string{group + "-0", group + "-1"}
	for _, name := range members {
		createPod(t, util.MakePod(ns, name).Label(schedulingv1beta1.PodGroupLabel, group).
			NodeSelector(map[string]string{gangLabel: "true"}).Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj())
	}
	waitAllocationOf(t, "the gang bound", func(b map[string]int) bool { return b[group] == 2 })
	setRunning(t, members)
}

// waitAdmitted waits until the controller admits the PodGroup to its queue (Inqueue).
func waitAdmitted(t *testing.T, group string) {
	t.Helper()
	var phase schedulingv1beta1.PodGroupPhase
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		pg, err := cluster.Queues.SchedulingV1beta1().PodGroups(ns).Get(ctx, group, metav1.GetOptions{})
		if err == nil {
			phase = pg.Status.Phase
		}
		return phase == schedulingv1beta1.PodGroupInqueue, nil
	})
	if err != nil {
		t.Fatalf("PodGroup %s was never admitted: %q", group, phase)
	}
}

// setRunning marks pods Running, as their kubelet would.
func setRunning(t *testing.T, names []string) {
	t.Helper()
	for _, name := range names {
		pod, err := cluster.Kube.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pod.Status.Phase = v1.PodRunning
		if _, err := cluster.Kube.CoreV1().Pods(ns).UpdateStatus(context.Background(), pod, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// A queue's Pending PodGroups enter it in order, by priority and then age, whatever order their
// events reach the controller: of two groups that each fit alone only the one ahead is admitted,
// and one that does not fit lets a smaller one behind it in. The groups are created while their
// queue is Suspended, so that all of them are judged together once it is resumed.
func TestPendingPodGroupsAreAdmittedInOrder(t *testing.T) {
	urgent := &schedulingapiv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "urgent-groups"}, Value: 1000}
	if _, err := cluster.Kube.SchedulingV1().PriorityClasses().Create(context.Background(), urgent, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cluster.Kube.SchedulingV1().PriorityClasses().Delete(context.Background(), urgent.Name, metav1.DeleteOptions{})
	})
	withQueues(t, util.MakeQueue("ordered").State(schedulingv1beta1.QueueStateSuspended).
		Capability(map[v1.ResourceName]string{v1.ResourceCPU: "10"}).Obj())
	groups := []*schedulingv1beta1.PodGroup{
		util.MakePodGroup(ns, "first").MinMember(2).Queue("ordered").MinResources(map[v1.ResourceName]string{v1.ResourceCPU: "6"}).Obj(),
		util.MakePodGroup(ns, "urgent").MinMember(2).Queue("ordered").PriorityClassName(urgent.Name).
			MinResources(map[v1.ResourceName]string{v1.ResourceCPU: "6"}).Obj(),
		util.MakePodGroup(ns, "small").MinMember(2).Queue("ordered").MinResources(map[v1.ResourceName]string{v1.ResourceCPU: "3"}).Obj(),
	}
	for i, pg := range groups {
		createPodGroup(t, pg)
		if i == 0 {
			waitNextSecond(t, pg.Name)
		}
	}
	t.Cleanup(func() {
		for _, pg := range groups {
			_ = cluster.Queues.SchedulingV1beta1().PodGroups(ns).Delete(context.Background(), pg.Name, metav1.DeleteOptions{})
		}
	})
	// The controller judges together the groups it knows of when the queue is resumed: wait until it
	// has seen every one (it writes each a Pending status of its generation).
	for _, pg := range groups {
		err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
			got, err := cluster.Queues.SchedulingV1beta1().PodGroups(ns).Get(ctx, pg.Name, metav1.GetOptions{})
			return err == nil && got.Status.Phase == schedulingv1beta1.PodGroupPending && got.Status.ObservedGeneration == got.Generation, nil
		})
		if err != nil {
			t.Fatalf("the controller never wrote PodGroup %s a Pending status within %s", pg.Name, settle)
		}
	}
	patch := []byte(`{"spec":{"state":"Open"}}`)
	if _, err := cluster.Queues.SchedulingV1beta1().Queues().Patch(context.Background(), "ordered", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUnschedulable(t, "first", `minResources do not fit: queue "ordered" would exceed its capability of cpu`)
	// One pass writes the three in order (urgent, first, small): small's write may follow first's.
	for _, name := range []string{"urgent", "small"} {
		var phase schedulingv1beta1.PodGroupPhase
		err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
			pg, err := cluster.Queues.SchedulingV1beta1().PodGroups(ns).Get(ctx, name, metav1.GetOptions{})
			if err == nil {
				phase = pg.Status.Phase
			}
			return phase == schedulingv1beta1.PodGroupInqueue, nil
		})
		if err != nil {
			t.Errorf("PodGroup %s is %q once the older group waits; want Inqueue", name, phase)
		}
	}
	if pg, err := cluster.Queues.SchedulingV1beta1().PodGroups(ns).Get(context.Background(), "first", metav1.GetOptions{}); err != nil ||
		pg.Status.Phase != schedulingv1beta1.PodGroupPending {
		t.Errorf("PodGroup first: %v, %v; want it still Pending behind the two that fit", pg, err)
	}
}

// waitNextSecond waits until the clock is a whole second past the PodGroup's creation timestamp, which
// counts whole seconds, so that a group created next is younger.
func waitNextSecond(t *testing.T, name string) {
	t.Helper()
	pg, err := cluster.Queues.SchedulingV1beta1().PodGroups(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created := pg.CreationTimestamp.Time
	err = wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(context.Context) (bool, error) {
		return time.Now().Truncate(time.Second).After(created), nil
	})
	if err != nil {
		t.Fatalf("the clock never passed the creation second of PodGroup %s", name)
	}
}
