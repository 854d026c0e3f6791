package controller

import (
	"sort"
	"sync"

	v1 "k8s.io/api/core/v1"
	quota "k8s.io/apiserver/pkg/quota/v1"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

// ReasonNotAdmitted is the reason of a Pending PodGroup's Unschedulable condition while its
// minResources do not fit its queue.
const ReasonNotAdmitted = "NotAdmitted"

// admission decides, one PodGroup at a time, which Pending groups enter their queue, and remembers
// what it admitted until the informer shows the new phase, so that two groups admitted in quick
// succession never both count on the same room.
type admission struct {
	mu       sync.Mutex
	admitted map[string]v1.ResourceList // PodGroup key → its minResources
}

func newAdmission() *admission {
	return &admission{admitted: map[string]v1.ResourceList{}}
}

// admitPodGroup says whether a Pending PodGroup may enter its queue now and, when it may not, why.
// A group without minResources enters as soon as its queue schedules; one with minResources when they
// fit the queue's capability and fair share (or idle room nobody below their share can claim), on
// top of what the queue's admitted, not yet running groups reserve.
func (c *Controller) admitPodGroup(pg *schedulingv1beta1.PodGroup) (bool, string) {
	queue := c.acct.QueueOfPodGroup(pg)
	q, ok := c.acct.Queue(queue)
	if !ok {
		return false, ""
	}
	if s := c.acct.SchedulingState(q); s == schedulingv1beta1.QueueStateSuspended || s == schedulingv1beta1.QueueStateUnknown {
		return false, ""
	}
	if len(pg.Spec.MinResources) == 0 {
		return true, ""
	}
	key := pg.Namespace + "/" + pg.Name
	c.admission.mu.Lock()
	defer c.admission.mu.Unlock()
	if refusal := c.acct.AdmitUnit(queue, pg.Spec.MinResources, c.reservedIn(queue, key)); refusal != nil {
		return false, "minResources do not fit: " + refusal.Message
	}
	c.admission.admitted[key] = pg.Spec.MinResources
	return true, ""
}

// forget drops what the admission remembers of key.
func (a *admission) forget(key string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.admitted, key)
}

// reservedIn sums what the queue's admitted work holds on to, but self: the minResources of its
// groups admitted but not running yet, and what its dequeued units reserve. Call with the admission
// lock held.
func (c *Controller) reservedIn(queue, self string) v1.ResourceList {
	total := c.unitsReservedIn(queue, self)
	for _, pg := range c.acct.PodGroupsOf(queue) {
		key := pg.Namespace + "/" + pg.Name
		if key == self {
			continue
		}
		_, pendingHere := c.admission.admitted[key]
		switch {
		case pg.Status.Phase == schedulingv1beta1.PodGroupInqueue:
			delete(c.admission.admitted, key)
			total = quota.Add(total, pg.Spec.MinResources)
		case pendingHere && (pg.Status.Phase == "" || pg.Status.Phase == schedulingv1beta1.PodGroupPending):
			total = quota.Add(total, pg.Spec.MinResources)
		case pendingHere:
			delete(c.admission.admitted, key)
		}
	}
	return total
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
