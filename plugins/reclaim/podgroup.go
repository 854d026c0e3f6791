package reclaim

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/queue-scheduler/queue-scheduler/pkg/cycle"
)

var _ fwk.PodGroupPostFilterPlugin = &Reclaim{}

// PodGroupPostFilter reclaims for a native gang (a pod of a scheduling.k8s.io PodGroup) that
// kube-scheduler's pod-group cycle could not place: there PostFilter does not run, and the group is
// one preemptor. The gang run is the one PostFilter makes for a gang of any other API; every node
// counts as one an eviction may help, as the group cycle keeps no statuses per node. Why reclaim
// cannot help is left in the group's cycle state, for Gang's report.
func (r *Reclaim) PodGroupPostFilter(ctx context.Context, state fwk.PodGroupCycleState, info fwk.PodGroupInfo,
	_ fwk.PodGroupSchedulingFunc) (*fwk.PodGroupPostFilterResult, *fwk.Status) {
	pods := info.GetUnscheduledPods()
	if len(pods) == 0 || r.preFilter == nil {
		return nil, fwk.NewStatus(fwk.Unschedulable, "reclaim: no member to place")
	}
	pod := pods[0]
	g := r.gangOf(pod)
	if g == nil {
		return nil, fwk.NewStatus(fwk.Unschedulable, "reclaim: the pod group has its minimum placed or too few members")
	}
	anyNode := framework.NewDefaultNodeToStatus()
	anyNode.SetAbsentNodesStatus(fwk.NewStatus(fwk.Unschedulable))
	podState := framework.NewCycleState()
	result, status := r.postFilterGang(ctx, podState, pod, anyNode, g)
	if why, ok := cycle.ReclaimRefusal(podState); ok {
		cycle.SetReclaimRefusal(state, why)
	}
	if !status.IsSuccess() {
		return nil, status
	}
	return groupNominations(pod, result), status
}

// groupNominations turns the nomination of the group's first member into the group's result; the
// other members were nominated when the gang run started.
func groupNominations(pod *v1.Pod, result *fwk.PostFilterResult) *fwk.PodGroupPostFilterResult {
	if result == nil || result.NominatingInfo == nil {
		return nil
	}
	key := types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}
	return &fwk.PodGroupPostFilterResult{NominatingInfos: map[types.NamespacedName]*fwk.NominatingInfo{key: result.NominatingInfo}}
}
