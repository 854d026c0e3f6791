package accounting

import (
	"math"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	schedv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

func ownedBy(p *v1.Pod, apiVersion, kind, name, uid string) *v1.Pod {
	p.OwnerReferences = append(p.OwnerReferences, metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID(uid), Controller: new(true)})
	return p
}

func unit(name, queue, apiVersion, kind, consumer string, cpu string) *schedulingv1beta1.QueueUnit {
	u := util.MakeQueueUnit("ns", name, queue, consumer).Resource(map[v1.ResourceName]string{v1.ResourceCPU: cpu}).Obj()
	u.Spec.ConsumerRef.APIVersion, u.Spec.ConsumerRef.Kind = apiVersion, kind
	return u
}

// Pods find their unit through their owner, directly or through the batch/v1 Job their owner made;
// they count in the unit's queue and allocation; an Enqueued unit's resource counts in its queue's
// demand.
func TestUnitOf(t *testing.T) {
	direct := unit("direct", "q1", "batch/v1", "Job", "train", "4")
	viaJob := unit("via-job", "q2", "kubeflow.org/v2beta1", "MPIJob", "mpi", "2")
	pinned := unit("pinned", "q2", "kubeflow.org/v1", "PyTorchJob", "torch", "2")
	pinned.Spec.ConsumerRef.UID = "torch-1"
	pinned.Status.Phase = schedulingv1beta1.QueueUnitDequeued
	launcher := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "mpi-launcher", UID: "launcher-uid",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "kubeflow.org/v2beta1", Kind: "MPIJob", Name: "mpi", UID: "mpi-uid"}}}}
	pods := map[string]*v1.Pod{
		"train-0":   ownedBy(util.MakePod("ns", "train-0").UID("train-0").Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Node("n").Obj(), "batch/v1", "Job", "train", "train-uid"),
		"train-1":   ownedBy(util.MakePod("ns", "train-1").UID("train-1").Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj(), "batch/v1", "Job", "train", "train-uid"),
		"launcher":  ownedBy(util.MakePod("ns", "launcher").UID("launcher").Obj(), "batch/v1", "Job", "mpi-launcher", "launcher-uid"),
		"torch-old": ownedBy(util.MakePod("ns", "torch-old").UID("torch-old").Obj(), "kubeflow.org/v1", "PyTorchJob", "torch", "torch-0"),
		"torch-new": ownedBy(util.MakePod("ns", "torch-new").UID("torch-new").Obj(), "kubeflow.org/v1", "PyTorchJob", "torch", "torch-1"),
		"loose":     util.MakePod("ns", "loose").UID("loose").Obj(),
	}
	kube := []runtime.Object{util.MakeNode("n", "10", "10Gi"), launcher}
	for _, p := range pods {
		kube = append(kube, p)
	}
	queues := []runtime.Object{util.MakeQueue("root").Obj(), util.MakeQueue("q1").Obj(), util.MakeQueue("q2").Obj(), direct, viaJob, pinned}
	a := newTestAccounting(t, queues, kube...)

	for name, want := range map[string]string{"train-0": "direct", "train-1": "direct", "launcher": "via-job", "torch-old": "", "torch-new": "pinned", "loose": ""} {
		got := ""
		if u := a.Store.UnitOf(pods[name]); u != nil {
			got = u.Name
		}
		if got != want {
			t.Errorf("UnitOf(%s) = %q, want %q", name, got, want)
		}
	}
	if q, _ := a.QueueOf(pods["launcher"]); q != "q2" {
		t.Errorf("QueueOf(launcher) = %q, want the unit's queue q2", q)
	}
	if got := a.Pods.UnitAllocated("ns/direct"); got.Cpu().String() != "1" {
		t.Errorf("UnitAllocated(direct) = %v, want the one bound pod's 1 CPU", got)
	}
	// q1: 1 CPU bound + 1 pending + 4 Enqueued; q2: the Enqueued MPIJob's 2 (the Dequeued unit asks
	// nothing more than its pods).
	_, demands, _ := a.shareTree(a.usageSnapshot(), nil, nil, nil)
	for queue, want := range map[string]string{"q1": "6", "q2": "2"} {
		if got := demands[queue]; got.Cpu().String() != want {
			t.Errorf("demand of %s = %v CPU, want %s", queue, got.Cpu(), want)
		}
	}
}

func TestUnitPriority(t *testing.T) {
	classes := []runtime.Object{
		&schedv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000},
		&schedv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Value: 10, GlobalDefault: true},
	}
	a := newTestAccounting(t, []runtime.Object{util.MakeQueue("root").Obj()}, classes...)
	for _, tt := range []struct {
		name      string
		priority  *int32
		className string
		want      int32
	}{
		{"explicit priority wins", new(int32(5)), "high", 5},
		{"from the class", nil, "high", 1000},
		{"missing class", nil, "nope", 0},
		{"global default", nil, "", 10},
	} {
		u := unit("u", "q", "batch/v1", "Job", "j", "1")
		u.Spec.Priority, u.Spec.PriorityClassName = tt.priority, tt.className
		if got := a.Store.UnitPriority(u); got != tt.want {
			t.Errorf("%s: UnitPriority = %d, want %d", tt.name, got, tt.want)
		}
	}
}

// Queues with units waiting are served least served first: DominantShare is what a queue holds of
// its deserved share in the resource where that is most.
func TestDominantShare(t *testing.T) {
	queues := []runtime.Object{util.MakeQueue("root").Obj(), util.MakeQueue("idle").Obj(), util.MakeQueue("half").Obj(),
		util.MakeQueue("over").Obj()}
	// On 12 CPUs half holds 2 of its 4 demanded, over holds 6 of its 12: over is served more.
	kube := []runtime.Object{util.MakeNode("n", "12", "12Gi"),
		pod("half", "h-0", "2", "n"), pod("half", "h-1", "2", ""), pod("over", "o-0", "6", "n"), pod("over", "o-1", "6", "")}
	a := newTestAccounting(t, queues, kube...)
	for _, tt := range []struct {
		queue string
		want  float64
	}{
		{"idle", 0},
		{"half", 2.0 / deservedCPU(a, "half")},
		{"over", 6.0 / deservedCPU(a, "over")},
	} {
		if got := a.DominantShare(tt.queue); got != tt.want {
			t.Errorf("DominantShare(%s) = %v, want %v", tt.queue, got, tt.want)
		}
	}
	if got := a.DominantShare("half"); got >= a.DominantShare("over") {
		t.Errorf("half (%v) should come before over (%v)", got, a.DominantShare("over"))
	}
	if !math.IsInf(policy.DominantShare(cpu("1"), nil), 1) {
		t.Error("holding what is not deserved at all should be +Inf")
	}
}

func deservedCPU(a *Accounting, queue string) float64 {
	d := a.Deserved(queue)
	return d.Cpu().AsApproximateFloat64()
}

func TestMovesShares(t *testing.T) {
	q := util.MakeQueue("q").Obj()
	q.Generation = 1
	written := q.DeepCopy()
	written.Status.Allocated = cpu("3")
	resized := q.DeepCopy()
	resized.Generation = 2
	unknown := q.DeepCopy()
	unknown.Status.State = schedulingv1beta1.QueueStateUnknown
	u := unit("u", "q", "batch/v1", "Job", "j", "1")
	told := u.DeepCopy()
	told.Status.Message = "still waiting"
	dequeued := u.DeepCopy()
	dequeued.Status.Phase = schedulingv1beta1.QueueUnitDequeued
	for _, tt := range []struct {
		name     string
		old, new any
		want     bool
	}{
		{"a status write of allocation", q, written, false},
		{"a spec change", q, resized, true},
		// A queue's state in status is a view, never an input: a missing parent reaches the shares
		// through the queue tree (queues added and deleted).
		{"a status write of the state", q, unknown, false},
		{"a unit's message", u, told, false},
		{"a unit dequeued", u, dequeued, true},
	} {
		if got := movesShares(tt.old, tt.new); got != tt.want {
			t.Errorf("%s: movesShares = %t, want %t", tt.name, got, tt.want)
		}
	}
}

// A Pending PodGroup asks through its minResources for what its pods do not ask for yet: a gang whose
// job creates its pods only once the group is admitted has a demand, and so a share, before them.
// An admitted group asks through its pods only.
func TestPendingPodGroupsAskForTheirMinResources(t *testing.T) {
	group := func(name string, phase schedulingv1beta1.PodGroupPhase) *schedulingv1beta1.PodGroup {
		pg := util.MakePodGroup("ns", name).Queue("q").MinMember(2).MinResources(map[v1.ResourceName]string{v1.ResourceCPU: "4"}).Obj()
		pg.Status.Phase = phase
		return pg
	}
	member := pod("q", "early-0", "1", "")
	member.Labels[schedulingv1beta1.PodGroupLabel] = "early"
	a := newTestAccounting(t, []runtime.Object{util.MakeQueue("root").Obj(), util.MakeQueue("q").Obj(),
		group("waiting", ""), group("early", schedulingv1beta1.PodGroupPending), group("admitted", schedulingv1beta1.PodGroupInqueue)},
		util.MakeNode("n", "20", "20Gi"), member)
	// waiting: 4; early: its pending member's 1 and 3 more; admitted: nothing without pods.
	_, demands, _ := a.shareTree(a.usageSnapshot(), nil, nil, nil)
	if got := demands["q"]; got.Cpu().String() != "8" {
		t.Errorf("demand = %v CPU, want 8", got.Cpu())
	}
	pg := group("g", "")
	admitted := group("g", schedulingv1beta1.PodGroupInqueue)
	if !movesShares(pg, admitted) {
		t.Error("a PodGroup's admission does not move the shares")
	}
}
