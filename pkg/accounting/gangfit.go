package accounting

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/gangs"
	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
)

// GangNeverFits says, on snap, which capability of pg's queue or of an ancestor the least its
// members making it whole ask for together exceeds (gangs.Least), or nil: nil too while its members
// cannot make it whole. Each member is admitted on its own request, and a PodGroup without
// minResources says nothing of its size at admission, so a gang can be let in that can never run.
func (a *Accounting) GangNeverFits(snap *policy.Snapshot, pg *schedulingv1beta1.PodGroup) *policy.Refusal {
	queue := a.QueueOfPodGroup(pg)
	capped := policy.Capped(snap, queue)
	if len(capped) == 0 {
		return nil
	}
	key := pg.Namespace + "/" + pg.Name
	least, ok := gangs.Least(pg, a.GangMembers(key), podRequests, capped)
	if !ok {
		return nil
	}
	refusal := policy.NeverFitsIn(snap, queue, least)
	if refusal != nil {
		refusal.Message = fmt.Sprintf("podgroup %s cannot run its %d members together: %s", key, pg.MinMemberOrOne(), refusal.Message)
	}
	return refusal
}

// podRequests is what pod asks for, as kube-scheduler counts it.
func podRequests(pod *v1.Pod) v1.ResourceList {
	return resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
}
