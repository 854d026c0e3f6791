package controller

import (
	"context"
	"sort"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/util/workqueue"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/holdreport"
	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
)

// ReasonNotAdmitted is the reason of a Pending PodGroup's Unschedulable condition while its
// minResources do not fit its queue.
const ReasonNotAdmitted = schedulingv1beta1.PodGroupNotAdmitted

// ReasonExceedsCapability is the reason of a Pending PodGroup's Unschedulable condition while its
// minResources alone exceed a capability of its queue or an ancestor (lowered after it was
// created): it waits until the capability is raised. Its held pods' reason has the same name.
const ReasonExceedsCapability = holdreport.ExceedsCapability

// admission is whether a Pending PodGroup may enter its queue now and, when it may not, why.
type admission struct {
	admitted bool
	// refusal says why not, for the group's Unschedulable condition; "" when nothing is to be said
	// (its queue is missing, Suspended or Unknown).
	refusal string
	// reason is the refusal's reason: ReasonNotAdmitted, or ReasonExceedsCapability.
	reason string
	// behind: the queue takes the group in its informer's store, and the snapshot still has it
	// Suspended, or does not hold it yet (see snapshotBehind): nothing is decided, and the pass stops.
	behind bool
}

// admitPodGroup says whether a Pending PodGroup may enter its queue now. A group without
// minResources enters as soon as its queue takes it (accounting.AdmittedAtOnce: its pods go before
// this admission is written); one with minResources when they fit the
// queue's capability and fair share (or idle room nobody below their share can claim), on top of
// what the queue's other admitted work reserves. The accounting reserves them at once, so two
// groups admitted in quick succession never count on the same room.
func (c *Controller) admitPodGroup(pg *schedulingv1beta1.PodGroup) admission {
	if ok, refusal := c.acct.QueueTakes(pg); !ok {
		return admission{refusal: refusal, reason: ReasonNotAdmitted}
	}
	if !takesRoom(pg) {
		return admission{admitted: true}
	}
	if r := c.acct.AdmitWork(accounting.PodGroupWork(pg), c.acct.Store.QueueOfPodGroup(pg), pg.Spec.MinResources); r != nil {
		if r.Suspended || r.Unseen {
			return admission{behind: true}
		}
		a := admission{refusal: "minResources do not fit: " + r.Message, reason: ReasonNotAdmitted}
		if r.ExceedsCapability {
			a.reason = ReasonExceedsCapability
		}
		return a
	}
	return admission{admitted: true}
}

func admissions(w *workqueues) workqueue.TypedRateLimitingInterface[string] { return w.admissions }

// enqueueAdmission runs an admission pass over the queue's Pending PodGroups with minResources.
func (c *Controller) enqueueAdmission(queue string) { c.enqueue(admissions, queue) }

// takesRoom says whether a Pending PodGroup's admission takes room in its queue (it has
// minResources), so that it is admitted in order with the queue's others; one without minResources
// enters as soon as its queue schedules, whatever the others do.
func takesRoom(pg *schedulingv1beta1.PodGroup) bool { return len(pg.Spec.MinResources) > 0 }

// enqueuePending retries the queue's Pending PodGroups when its room or state may have changed: one
// admission pass for those that take room, a sync each for the others.
func (c *Controller) enqueuePending(queue string) {
	pass := false
	for _, pg := range c.acct.Store.PodGroupsOf(queue) {
		switch {
		case !isPending(pg):
		case takesRoom(pg):
			pass = true
		default:
			c.enqueuePodGroup(pg.Namespace + "/" + pg.Name)
		}
	}
	if pass {
		c.enqueueAdmission(queue)
	}
}

// admitPending is one admission pass over a queue's Pending PodGroups that take room, by priority,
// then age: each is admitted or keeps waiting with the reason, in that order, so that of two groups
// that each fit alone the one ahead enters first, however their events were delivered. Another
// API's group takes part once its mirror is in the store, ordered by the mirror's creation: two
// sources mirrored side by side in one moment enter in either order. A group that does not fit does
// not stop the ones behind it; a snapshot behind the queue's change does, and the pass runs again
// in a moment.
func (c *Controller) admitPending(ctx context.Context, queue string) error {
	var errs []error
	for _, pg := range c.pendingPodGroups(queue) {
		a := c.admitPodGroup(pg)
		if a.behind {
			c.enqueueAfter(admissions, queue, snapshotBehind)
			break
		}
		errs = append(errs, c.writePodGroupStatus(ctx, pg, a))
	}
	return utilerrors.NewAggregate(errs)
}

// pendingPodGroups lists the queue's PodGroups that take room and are not admitted yet, in the
// order they are admitted: by priority, then age, then name.
func (c *Controller) pendingPodGroups(queue string) []*schedulingv1beta1.PodGroup {
	var pending []*schedulingv1beta1.PodGroup
	priority := map[*schedulingv1beta1.PodGroup]int32{}
	for _, pg := range c.acct.Store.PodGroupsOf(queue) {
		if isPending(pg) && takesRoom(pg) {
			pending = append(pending, pg)
			priority[pg] = c.acct.Store.PodGroupPriority(pg)
		}
	}
	sort.Slice(pending, func(i, j int) bool {
		return policy.Ahead(policy.PlaceOf(pending[i], priority[pending[i]]), policy.PlaceOf(pending[j], priority[pending[j]]))
	})
	return pending
}

func isPending(pg *schedulingv1beta1.PodGroup) bool {
	return pg.Status.Phase == "" || pg.Status.Phase == schedulingv1beta1.PodGroupPending
}
