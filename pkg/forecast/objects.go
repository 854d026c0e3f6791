package forecast

import (
	v1 "k8s.io/api/core/v1"

	"github.com/queue-scheduler/queue-scheduler/pkg/podfit"
)

// NodesOf reads the snapshot's nodes from the cluster's nodes and the pods bound to them: each
// node's free room is its allocatable less what its live pods request, and each of those pods runs,
// for the queue queueOf names ("" for none), until endsOf says. A cordoned node keeps its pods and
// takes no new ones; a pod on a node not given, or ended, is left out.
func NodesOf(dims []v1.ResourceName, nodes []*v1.Node, pods []*v1.Pod, queueOf func(*v1.Pod) string, endsOf func(*v1.Pod) Ends) []Node {
	out := make([]Node, len(nodes))
	index := make(map[string]int, len(nodes))
	for i, node := range nodes {
		allocatable := node.Status.Allocatable
		out[i] = Node{Name: node.Name, Free: podfit.Amounts(dims, allocatable, allocatable.Pods().Value()), Cordoned: node.Spec.Unschedulable}
		index[node.Name] = i
	}
	for _, pod := range pods {
		i, ok := index[pod.Spec.NodeName]
		if !ok || pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed {
			continue
		}
		r := Running{Queue: queueOf(pod), Requests: podfit.Requests(dims, pod), Ends: endsOf(pod)}
		out[i].Free.Add(r.Requests, -1)
		out[i].Running = append(out[i].Running, r)
	}
	return out
}

// MembersOf are pods as the members of a piece of work: what each requests, and where it may run
// among the nodes eligible reads.
func MembersOf(dims []v1.ResourceName, pods []*v1.Pod, eligible *podfit.Eligibility) []Member {
	out := make([]Member, len(pods))
	for i, pod := range pods {
		out[i] = Member{Requests: podfit.Requests(dims, pod), Eligible: eligible.Of(pod)}
	}
	return out
}
