package forecast

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/queue-scheduler/queue-scheduler/pkg/podfit"
)

func clusterNode(name, cpu string, cordoned bool) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.NodeSpec{Unschedulable: cordoned},
		Status: v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourcePods: resource.MustParse("110")}}}
}

func clusterPod(name, node, cpu string, phase v1.PodPhase) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Spec: v1.PodSpec{NodeName: node,
		Containers: []v1.Container{{Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}}}}},
		Status: v1.PodStatus{Phase: phase}}
}

// The nodes as the forecast reads them: allocatable less what the live pods on them request, those
// pods running for their queues until their ends; ended pods and pods of other nodes left out.
func TestNodesOf(t *testing.T) {
	end := Ends{P50: now.Add(time.Minute), P90: now.Add(2 * time.Minute)}
	nodes := NodesOf(dims, []*v1.Node{clusterNode("a", "8", false), clusterNode("b", "4", true)},
		[]*v1.Pod{clusterPod("running", "a", "3", v1.PodRunning), clusterPod("done", "a", "2", v1.PodSucceeded),
			clusterPod("elsewhere", "c", "1", v1.PodRunning), clusterPod("cordoned", "b", "1", v1.PodRunning)},
		func(p *v1.Pod) string { return "q-" + p.Name }, func(*v1.Pod) Ends { return end })
	if len(nodes) != 2 || nodes[0].Free[0] != 5000 || nodes[0].Free[2] != 109 || len(nodes[0].Running) != 1 {
		t.Fatalf("node a %+v, want 5 CPUs and 109 pods free, one pod running", nodes[0])
	}
	if r := nodes[0].Running[0]; r.Queue != "q-running" || r.Requests[0] != 3000 || r.Ends != end {
		t.Errorf("a's pod %+v, want q-running's 3 CPUs until its end", r)
	}
	if b := nodes[1]; !b.Cordoned || b.Free[0] != 3000 {
		t.Errorf("node b %+v, want cordoned, 3 CPUs free", b)
	}
	// A cordoned node takes nothing new, though it has room.
	s := snapshot([]Node{{Name: "c", Free: cpu(8), Cordoned: true}, node("d", 2, "q")}, []Queue{queue("q", "")},
		work("four", "q", 0, time.Minute, cpu(4)))
	if got := Predict(s, settings())["four"]; !got.P50.IsZero() {
		t.Errorf("4 CPUs where only a cordoned node has room: start %v, want none", got.P50.Sub(now))
	}
}

// Members read their requests and their eligible nodes.
func TestMembersOf(t *testing.T) {
	selecting := clusterPod("m", "", "2", v1.PodPending)
	selecting.Spec.NodeSelector = map[string]string{"pool": "x"}
	pool := clusterNode("x", "8", false)
	pool.Labels = map[string]string{"pool": "x"}
	members := MembersOf(dims, []*v1.Pod{selecting}, podfit.NewEligibility([]*v1.Node{clusterNode("a", "8", false), pool}))
	if len(members) != 1 || members[0].Requests[0] != 2000 || members[0].Eligible[0] || !members[0].Eligible[1] {
		t.Errorf("members %+v, want 2 CPUs, on x only", members)
	}
}
