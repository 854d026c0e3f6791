package reclaim

import (
	"context"
	"slices"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
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
