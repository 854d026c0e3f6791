package controller

import (
	"sort"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
)

// ReasonNotAdmitted is the reason of a Pending PodGroup's Unschedulable condition while its
// minResources do not fit its queue.
const ReasonNotAdmitted = "NotAdmitted"

// admitPodGroup says whether a Pending PodGroup may enter its queue now and, when it may not, why.
// A group without minResources enters as soon as its queue schedules; one with minResources when they
// fit the queue's capability and fair share (or idle room nobody below their share can claim), on
// top of what the queue's other admitted work reserves. The accounting reserves them at once, so two
// groups admitted in quick succession never count on the same room.
func (c *Controller) admitPodGroup(pg *schedulingv1beta1.PodGroup) (bool, string) {
	queue := c.acct.QueueOfPodGroup(pg)
	q, ok := c.acct.Queue(queue)
	if !ok {
		return false, ""
	}
	if s := c.acct.SchedulingState(q); s == schedulingv1beta1.QueueStateSuspended || s == schedulingv1beta1.QueueStateUnknown {
		return false, ""
	}
	if refusal := c.acct.NamespaceRefusal(q, pg.Namespace); refusal != "" {
		return false, refusal
	}
	if len(pg.Spec.MinResources) == 0 {
		return true, ""
	}
	if refusal := c.acct.AdmitWork(accounting.PodGroupWork(pg), queue, pg.Spec.MinResources); refusal != nil {
		return false, "minResources do not fit: " + refusal.Message
	}
	return true, ""
}

// enqueuePendingPodGroups retries the queue's Pending groups, oldest first, when its room may have
// changed.
func (c *Controller) enqueuePendingPodGroups(queue string) {
	var pending []*schedulingv1beta1.PodGroup
	for _, pg := range c.acct.PodGroupsOf(queue) {
		if pg.Status.Phase == "" || pg.Status.Phase == schedulingv1beta1.PodGroupPending {
			pending = append(pending, pg)
		}
	}
	sort.Slice(pending, func(i, j int) bool {
		return pending[i].CreationTimestamp.Before(&pending[j].CreationTimestamp)
	})
	for _, pg := range pending {
		c.enqueuePodGroup(pg.Namespace + "/" + pg.Name)
	}
}
