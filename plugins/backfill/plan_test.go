package backfill

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/utils/ptr"

	"github.com/queue-scheduler/queue-scheduler/apis/config"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
)

var now = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

func cpuPod(name, cpu string, deadline int64, started time.Time) *v1.Pod {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: k8stypes.UID("ns-" + name)},
		Spec: v1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](0), Containers: []v1.Container{{Name: "c",
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}}}}}}
	if deadline > 0 {
		pod.Spec.ActiveDeadlineSeconds = ptr.To(deadline)
	}
	if !started.IsZero() {
		pod.Status.StartTime = ptr.To(metav1.NewTime(started))
	}
	return pod
}

// nodeInfo is a node of cpu CPUs running pods.
func nodeInfo(name, cpu string, taints []v1.Taint, pods ...*v1.Pod) fwk.NodeInfo {
	info := framework.NewNodeInfo(pods...)
	info.SetNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.NodeSpec{Taints: taints},
		Status: v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourcePods: resource.MustParse("110")}}})
	return info
}

func newPlanner(t testing.TB) *Backfill {
	args, err := config.DecodeBackfill(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &Backfill{acct: new(accounting.Accounting), plans: accounting.NewStartPlans(&accounting.Events{}), args: args}
}

// The plan reads the nodes as the scheduler's snapshot has them: a pod's end from its start and its
// activeDeadlineSeconds, a pod without one holding its room for ever, a tainted node the gang does not
// tolerate left out, a cordoned one too.
func TestPlanReadsTheNodes(t *testing.T) {
	b := newPlanner(t)
	tainted := []v1.Taint{{Key: "dedicated", Value: "other", Effect: v1.TaintEffectNoSchedule}}
	infos := []fwk.NodeInfo{
		nodeInfo("a-forever", "8", nil, cpuPod("f", "4", 0, now)),
		nodeInfo("b-tainted", "8", tainted),
		nodeInfo("c-soon", "8", nil, cpuPod("s", "4", 600, now.Add(-5*time.Minute))),
		nodeInfo("d-later", "8", nil, cpuPod("l", "4", 3600, now)),
	}
	cordoned := nodeInfo("e-cordoned", "8", nil)
	cordoned.Node().Spec.Unschedulable = true
	infos = append(infos, cordoned)
	gang := accounting.WaitingGang{Key: "ns/g", Members: []*v1.Pod{cpuPod("m", "8", 0, time.Time{})}}
	p := b.planOn(infos, []accounting.WaitingGang{gang}, now)
	r := p.Reservation("ns/g")
	if r == nil || len(r.Nodes) != 1 || r.Nodes[0].Node != "c-soon" || !r.Start.Equal(now.Add(5*time.Minute)) {
		t.Fatalf("reservation %+v, want c-soon from 5m", r)
	}
}

// A member placed and waiting at Permit for the rest of its gang keeps its node for the gang: the plan
// counts the node's room as the gang's, and a pod without a bound may not take it if the member
// goes back to the queue.
func TestMembersWaitingAtPermitKeepTheirRoom(t *testing.T) {
	b := newPlanner(t)
	placed := cpuPod("m-0", "8", 0, time.Time{})
	placed.Spec.NodeName = "a-placed"
	infos := []fwk.NodeInfo{
		nodeInfo("a-placed", "8", nil, placed),
		nodeInfo("b-soon", "8", nil, cpuPod("s", "8", 300, now)),
		nodeInfo("c-soon", "8", nil, cpuPod("t", "8", 300, now)),
	}
	gang := accounting.WaitingGang{Key: "ns/g", Members: []*v1.Pod{placed, cpuPod("m-1", "8", 0, time.Time{})}, Placing: []*v1.Pod{placed}}
	p := b.planOn(infos, []accounting.WaitingGang{gang}, now)
	r := p.Reservation("ns/g")
	if r == nil || len(r.Nodes) != 2 || r.Nodes[0].Node != "a-placed" || !r.Start.Equal(now.Add(5*time.Minute)) {
		t.Fatalf("reservation %+v, want a-placed and one more from 5m", r)
	}
	if g := p.Guards("a-placed"); len(g) != 1 || g[0].OwnTaken[0] != 8000 {
		t.Fatalf("guards of a-placed %+v, want the placed member's 8 cpu taken of the gang's share", g)
	}
	p.Take("a-placed", b.podOf(p.Dims, placed, "ns/g", now), -1) // the member goes back to the queue
	if g := p.Blocking("a-placed", b.podOf(p.Dims, cpuPod("other", "1", 0, time.Time{}), "", now)); g == nil {
		t.Error("a pod without a bound may take the room of a member that went back to the queue")
	}
}

// BenchmarkPlan plans 5 gangs of 200 whole-node members on 5,000 nodes running 10,000 pods whose
// bounds end over 24 hours: the replan the Backfill plugin makes at most once a replan interval.
func BenchmarkPlan(b *testing.B) { benchmarkPlan(b, false) }

// BenchmarkPlanMixed is BenchmarkPlan with a member of 1 CPU in place of each gang's last: the
// gangs a tenant could shape to make every time worth a fit.
func BenchmarkPlanMixed(b *testing.B) { benchmarkPlan(b, true) }

func benchmarkPlan(b *testing.B, mixed bool) {
	planner := newPlanner(b)
	infos := make([]fwk.NodeInfo, 5000)
	for i := range infos {
		started := now.Add(-time.Duration(i%1440) * time.Minute)
		infos[i] = nodeInfo(fmt.Sprintf("node-%04d", i), "32", nil,
			cpuPod(fmt.Sprintf("p-%d-0", i), "8", 86400, started), cpuPod(fmt.Sprintf("p-%d-1", i), "8", 43200, started))
	}
	var gangs []accounting.WaitingGang
	for g := range 5 {
		gang := accounting.WaitingGang{Key: fmt.Sprintf("ns/g%d", g)}
		for m := range 200 {
			size := "32"
			if mixed && m == 199 {
				size = "1"
			}
			gang.Members = append(gang.Members, cpuPod(fmt.Sprintf("g%d-%d", g, m), size, 7200, time.Time{}))
		}
		gangs = append(gangs, gang)
	}
	b.ResetTimer()
	for b.Loop() {
		if p := planner.planOn(infos, gangs, now); len(p.Reservations) != 5 {
			b.Fatalf("%d reservations, want 5", len(p.Reservations))
		}
	}
}
