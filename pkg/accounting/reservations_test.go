package accounting

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// An admitted PodGroup's room is held back from other pods of its queue at its capability, less what
// its bound members hold; its own members are not held back by it.
func TestAdmitCountsAdmittedPodGroups(t *testing.T) {
	gang := util.MakePodGroup("ns", "gang").Queue("capped").MinMember(2).
		MinResources(map[v1.ResourceName]string{v1.ResourceCPU: "6"}).Obj()
	gang.Status.Phase = schedulingv1beta1.PodGroupInqueue
	a := newTestAccounting(t, []runtime.Object{util.MakeQueue("root").Obj(),
		util.MakeQueue("capped").Capability(map[v1.ResourceName]string{v1.ResourceCPU: "10"}).Obj(), gang},
		util.MakeNode("n", "20", "20Gi"))
	member := func(name, cpu string) *v1.Pod {
		p := pod("capped", name, cpu, "")
		p.Labels[schedulingv1beta1.PodGroupLabel] = "gang"
		return p
	}
	if r := a.Admit("capped", "", cpu("5")); r == nil || !strings.Contains(r.Message, "6 reserved by admitted work") {
		t.Errorf("another pod, 5 of 10 with 6 reserved: got %+v, want refused", r)
	}
	if r := a.Admit("capped", a.PodWork(member("m-0", "3")), cpu("3")); r != nil {
		t.Errorf("a member of the gang: %q", r.Message)
	}
	bound := member("m-0", "3")
	bound.Spec.NodeName = "n"
	a.Pods.upsert(bound)
	compute(a)
	// 3 held by the member, 3 still reserved: 4 more fit.
	if r := a.Admit("capped", "", cpu("4")); r != nil {
		t.Errorf("another pod once a member holds 3: %q", r.Message)
	}
	if r := a.Admit("capped", "", cpu("5")); r == nil {
		t.Error("another pod of 5 once a member holds 3: want refused")
	}
	h := a.HeadroomOf(a.Snapshot(), "capped", "", cpu("5"))
	if h.Fits(policy.AmountsOf(cpu("999m"))) || !h.Fits(policy.AmountsOf(cpu("1"))) {
		t.Errorf("headroom of a pod of 5: %+v, want 1 cpu to free", h)
	}
}

// A parent's capability counts what the admitted work of every queue below it reserves: a PodGroup
// admitted in one child keeps its room from the pods and the work of its sibling, and from its own
// queue's other pods; a sibling's pod that fits beside the reservation goes, and the headroom a
// sibling's pod must free counts the reservation too.
func TestParentCapabilityCountsItsChildrensReservations(t *testing.T) {
	gang := util.MakePodGroup("ns", "gang").Queue("a").MinMember(2).
		MinResources(map[v1.ResourceName]string{v1.ResourceCPU: "8"}).Obj()
	gang.Status.Phase = schedulingv1beta1.PodGroupInqueue
	ten := map[v1.ResourceName]string{v1.ResourceCPU: "10"}
	a := newTestAccounting(t, []runtime.Object{util.MakeQueue("root").Obj(), util.MakeQueue("parent").Capability(ten).Obj(),
		util.MakeQueue("a").Parent("parent").Capability(ten).Obj(), util.MakeQueue("b").Parent("parent").Capability(ten).Obj(), gang},
		util.MakeNode("n", "20", "20Gi"))
	want := `queue "parent" would exceed its capability of cpu: 0 allocated + 8 reserved by admitted work + 4 requested > 10`
	if r := a.Admit("b", "", cpu("4")); r == nil || r.Message != want {
		t.Errorf("a pod of the sibling queue asking 4: got %+v, want %q", r, want)
	}
	if r := a.Admit("b", "", cpu("2")); r != nil {
		t.Errorf("a pod of the sibling queue asking 2, beside the 8 reserved: %q", r.Message)
	}
	if r := a.Admit("a", "", cpu("4")); r == nil || !strings.Contains(r.Message, "8 reserved by admitted work") {
		t.Errorf("another pod of the gang's queue asking 4: got %+v, want refused for the reservation", r)
	}
	other := util.MakePodGroup("ns", "other").Queue("b").MinMember(1).MinResources(map[v1.ResourceName]string{v1.ResourceCPU: "4"}).Obj()
	if r := a.AdmitWork(PodGroupWork(other), "b", other.Spec.MinResources); r == nil || !strings.Contains(r.Message, `queue "parent" would exceed`) {
		t.Errorf("a PodGroup of the sibling queue asking 4: got %+v, want refused at the parent's capability", r)
	}
	h := a.HeadroomOf(a.Snapshot(), "b", "", cpu("4"))
	if h.Fits(policy.AmountsOf(cpu("1999m"))) || !h.Fits(policy.AmountsOf(cpu("2"))) {
		t.Errorf("headroom of a sibling's pod of 4: %+v, want 2 cpu to free", h)
	}
}

// The members of a group already admitted are held back by no reservation: two groups of sibling
// queues both admitted (by an older version, or before their parent's capability was lowered) would
// otherwise each wait for the other's room for ever. Other pods are still held back by both.
func TestAdmittedGroupsDoNotWaitForEachOther(t *testing.T) {
	eight := map[v1.ResourceName]string{v1.ResourceCPU: "8"}
	first := util.MakePodGroup("ns", "first").Queue("a").MinMember(2).MinResources(eight).Obj()
	second := util.MakePodGroup("ns", "second").Queue("b").MinMember(2).MinResources(eight).Obj()
	first.Status.Phase, second.Status.Phase = schedulingv1beta1.PodGroupInqueue, schedulingv1beta1.PodGroupInqueue
	ten := map[v1.ResourceName]string{v1.ResourceCPU: "10"}
	a := newTestAccounting(t, []runtime.Object{util.MakeQueue("root").Obj(), util.MakeQueue("parent").Capability(ten).Obj(),
		util.MakeQueue("a").Parent("parent").Capability(ten).Obj(), util.MakeQueue("b").Parent("parent").Capability(ten).Obj(), first, second},
		util.MakeNode("n", "20", "20Gi"))
	for _, g := range []*schedulingv1beta1.PodGroup{first, second} {
		if r := a.Admit(g.Spec.Queue, PodGroupWork(g), cpu("4")); r != nil {
			t.Errorf("a member of admitted group %s: %q", g.Name, r.Message)
		}
	}
	if r := a.Admit("b", "", cpu("1")); r == nil || !strings.Contains(r.Message, "reserved by admitted work") {
		t.Errorf("another pod of queue b: got %+v, want refused for the reservations", r)
	}
}

// Work admitted a moment ago holds its room before the informer shows it admitted, and gives it back
// when its admission does not go through.
func TestAdmitWorkReservesAtOnce(t *testing.T) {
	a := newTestAccounting(t, []runtime.Object{util.MakeQueue("root").Obj(),
		util.MakeQueue("capped").Capability(map[v1.ResourceName]string{v1.ResourceCPU: "10"}).Obj()},
		util.MakeNode("n", "20", "20Gi"))
	first := util.MakeQueueUnit("ns", "first", "capped", "job-1").Resource(map[v1.ResourceName]string{v1.ResourceCPU: "6"}).Obj()
	second := util.MakeQueueUnit("ns", "second", "capped", "job-2").Resource(map[v1.ResourceName]string{v1.ResourceCPU: "6"}).Obj()
	for _, u := range []*schedulingv1beta1.QueueUnit{first, second} {
		if err := a.Informers.Scheduling().V1beta1().QueueUnits().Informer().GetIndexer().Add(u); err != nil {
			t.Fatal(err)
		}
	}
	if r := a.AdmitWork(UnitWork(first), "capped", first.Spec.Resource); r != nil {
		t.Fatalf("first unit: %q", r.Message)
	}
	if r := a.AdmitWork(UnitWork(second), "capped", second.Spec.Resource); r == nil {
		t.Fatal("second unit admitted on the room the first holds")
	}
	a.ForgetWork(UnitWork(first))
	if r := a.AdmitWork(UnitWork(second), "capped", second.Spec.Resource); r != nil {
		t.Errorf("second unit once the first gave its room back: %q", r.Message)
	}
}

// Admitted work tells its queue when it gives back room it reserved: a PodGroup that leaves Inqueue
// or whose minResources change while there, deleted work. A status write that changes neither (a
// count of members) tells nothing, nor does a change of a group that reserves nothing (Running).
func TestWorkReleasedTellsRoomGivenBack(t *testing.T) {
	gang := util.MakePodGroup("ns", "gang").Queue("team").MinMember(2).
		MinResources(map[v1.ResourceName]string{v1.ResourceCPU: "6"}).Obj()
	gang.Status.Phase = schedulingv1beta1.PodGroupInqueue
	unit := util.MakeQueueUnit("ns", "unit", "other", "job").Obj()
	barrier := util.MakePodGroup("ns", "barrier").Queue("other").MinMember(1).Obj()
	a := newTestAccounting(t, []runtime.Object{util.MakeQueue("root").Obj(), util.MakeQueue("team").Obj(),
		util.MakeQueue("other").Obj(), gang, barrier, unit})
	var mu sync.Mutex
	var told []string
	a.Events.WorkReleased.Subscribe(func(queue string) {
		mu.Lock()
		defer mu.Unlock()
		told = append(told, queue)
	})
	told1 := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(told)
	}
	ctx := context.Background()
	pgs := a.Client.SchedulingV1beta1().PodGroups("ns")
	update := func(change func(*schedulingv1beta1.PodGroup)) {
		t.Helper()
		pg, err := pgs.Get(ctx, "gang", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		change(pg)
		if _, err := pgs.Update(ctx, pg, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	update(func(pg *schedulingv1beta1.PodGroup) { pg.Status.Running = 1 })
	update(func(pg *schedulingv1beta1.PodGroup) {
		pg.Spec.MinResources = v1.ResourceList{v1.ResourceCPU: resource.MustParse("4")}
	})
	update(func(pg *schedulingv1beta1.PodGroup) { pg.Status.Phase = schedulingv1beta1.PodGroupRunning })
	update(func(pg *schedulingv1beta1.PodGroup) { pg.Spec.MinResources = nil }) // Running: it reserves nothing
	// One informer's events come in order: once the barrier's deletion is told, every update of the
	// gang before it was heard.
	if err := pgs.Delete(ctx, "barrier", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitTold := func(n int) {
		t.Helper()
		err := wait.PollUntilContextTimeout(ctx, time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
			return len(told1()) >= n && told1()[len(told1())-1] == "other", nil
		})
		if err != nil {
			t.Fatalf("the deletion in other was never told; told %v", told1())
		}
	}
	waitTold(1)
	if diff := cmp.Diff([]string{"team", "team", "other"}, told1()); diff != "" {
		t.Errorf("queues told (-want,+got):\n%s", diff)
	}
	if err := a.Client.SchedulingV1beta1().QueueUnits("ns").Delete(ctx, "unit", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitTold(4)
}
