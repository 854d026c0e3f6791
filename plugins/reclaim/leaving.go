package reclaim

import (
	"context"
	"slices"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/queue-scheduler/queue-scheduler/pkg/cycle"
)

// roomBeingFreed returns a node where pod fits once the pods on their way out of it are gone, the
// pods nominated there (of its priority or higher) counted, its own nominated node first; "" when
// there is none. Such room is the pod's to wait for: evicting elsewhere too would take twice.
func (r *Reclaim) roomBeingFreed(ctx context.Context, state fwk.CycleState, pod *v1.Pod, m fwk.NodeToStatusReader) string {
	nodes, err := m.NodesForStatusCode(r.handle.SnapshotSharedLister().NodeInfos(), fwk.Unschedulable)
	if err != nil {
		return ""
	}
	nodes = slices.Clone(nodes) // the snapshot's own list when every node shares one status
	for i, info := range nodes {
		if info.Node().Name == pod.Status.NominatedNodeName {
			nodes[0], nodes[i] = nodes[i], nodes[0]
			break
		}
	}
	for _, info := range nodes {
		going := r.goingOn(info)
		if len(going) == 0 {
			continue
		}
		n := &nodeRun{ctx: ctx, handle: r.handle, state: state.Clone(), preemptor: pod, node: info.Snapshot()}
		if n.removePods(going) == nil && n.fits() {
			return info.Node().Name
		}
	}
	return ""
}

// roomLetInFor returns the node of the room pod was let in for ahead of younger pods (Proportion),
// when the cycle's snapshot still holds the pod that freed it and pod fits there without it; ""
// otherwise. The accounting counted that pod gone, and the scheduler's cache counts it a moment
// later: nominated there, pod keeps the room from the pods tried in between, which would otherwise
// take it while pod waits out its backoff. Nothing is evicted for it. A pod nominated already is
// left where its plan put it, the evictions for it under way.
func (r *Reclaim) roomLetInFor(ctx context.Context, state fwk.CycleState, pod *v1.Pod) string {
	letIn, ok := cycle.LetInOf(state)
	if !ok || pod.Status.NominatedNodeName != "" {
		return ""
	}
	info, err := r.handle.SnapshotSharedLister().NodeInfos().Get(letIn.Node)
	if err != nil {
		return ""
	}
	for _, pi := range info.GetPods() {
		if pi.GetPod().UID != letIn.Pod {
			continue
		}
		going := r.goingOn(info)
		if !slices.ContainsFunc(going, func(g fwk.PodInfo) bool { return g.GetPod().UID == letIn.Pod }) {
			going = append(going, pi)
		}
		n := &nodeRun{ctx: ctx, handle: r.handle, state: state.Clone(), preemptor: pod, node: info.Snapshot()}
		if n.removePods(going) == nil && n.fits() {
			return letIn.Node
		}
		return ""
	}
	return ""
}
