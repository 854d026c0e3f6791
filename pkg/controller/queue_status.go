package controller

import (
	"context"
	"fmt"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/readmodel"
)

// QueueActive is the queue condition that is True while the queue accepts and schedules new work,
// and otherwise says why not.
const QueueActive = "Active"

// QueueGuaranteeRejected is the queue condition that is True while the queue's guarantee has
// entries that were not taken (a flat entry that is not a quantity, which the webhook refuses, in a
// queue that came past it), naming each with its rule: nothing is guaranteed for them.
const QueueGuaranteeRejected = "GuaranteeRejected"

// syncQueue writes the queue's status if it changed and cascades its requested state to its children.
// A queue that is gone has what it left behind cleaned up.
func (c *Controller) syncQueue(ctx context.Context, name string) error {
	q, ok := c.acct.Store.Queue(name)
	if !ok {
		c.usageWrites.forget(name)
		return c.cleanUpAfter(ctx, name)
	}
	c.enqueuePending(name)
	c.offerRoomToUnits()
	if err := c.writeStatus(ctx, q); err != nil {
		return err
	}
	return c.cascade(ctx, q)
}

// offerRoomToUnits runs a dequeue pass when units were left Enqueued: a queue's room may have changed.
func (c *Controller) offerRoomToUnits() {
	if c.unitsWaiting.Load() {
		c.enqueueDequeue()
	}
}

func (c *Controller) writeStatus(ctx context.Context, q *schedulingv1beta1.Queue) error {
	status := c.desiredStatus(q)
	var due, runtimesDue time.Duration
	status.Usage, due = c.usageCheckpoint(q)
	status.Runtimes, runtimesDue = c.view.RuntimesCheckpoint(q, c.checkpointInterval(q.Name))
	if due == 0 || (runtimesDue > 0 && runtimesDue < due) {
		due = runtimesDue
	}
	if due > 0 {
		c.enqueueQueueAfter(q.Name, due)
	}
	if apiequality.Semantic.DeepEqual(status, q.Status) {
		return nil
	}
	q = q.DeepCopy()
	q.Status = status
	_, err := c.acct.Client.SchedulingV1beta1().Queues().UpdateStatus(ctx, q, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) {
		// The cache is behind the stored queue. A newer version's event may be usage only, which
		// syncs nothing: the queue is synced again once the pacing allows, from a newer cache.
		c.enqueueQueuePaced(q.Name)
		return nil
	}
	return ignoreGoneOrStale(err)
}

// workCounts is what a queue holds, as its status reports it.
type workCounts struct {
	readmodel.WorkCounts
	// unfinishedUnits counts the Dequeued units whose consumer has not finished.
	unfinishedUnits int32
	pods            int
}

// live says whether anything in the queue has not finished.
func (w workCounts) live() bool {
	return w.pods > 0 || w.Pending+w.Inqueue+w.Running+w.Unknown > 0 || w.Enqueued+w.unfinishedUnits > 0
}

func (c *Controller) countWork(queue string, livePods int) workCounts {
	w := workCounts{WorkCounts: c.view.WorkCounts(queue)}
	for _, u := range c.acct.Store.QueueUnitsOf(queue) {
		if !u.Dequeued() {
			continue
		}
		if s := c.consumers.state(u.Namespace, u.Spec.ConsumerRef); s != consumerFinished && s != consumerMissing {
			w.unfinishedUnits++
		}
	}
	w.pods = livePods
	return w
}

// desiredStatus computes a queue's status from the caches and the accounting.
func (c *Controller) desiredStatus(q *schedulingv1beta1.Queue) schedulingv1beta1.QueueStatus {
	usage := c.acct.Pods.Usage(q.Name)
	w := c.countWork(q.Name, usage.Pods)
	state, reason, message := deriveState(q, c.acct.Store.TreeFaultOf(q), w)
	status := schedulingv1beta1.QueueStatus{
		State:              state,
		Pending:            w.Pending,
		Inqueue:            w.Inqueue,
		Running:            w.Running,
		Completed:          w.Completed,
		Unknown:            w.Unknown,
		RunningPods:        int32(usage.Bound),
		PendingPods:        int32(usage.Pods - usage.Bound),
		Enqueued:           w.Enqueued,
		Dequeued:           w.Dequeued,
		Allocated:          usage.Allocated,
		Deserved:           c.acct.Deserved(q.Name),
		Conditions:         append([]metav1.Condition(nil), q.Status.Conditions...),
		ObservedGeneration: q.Generation,
	}
	if len(status.Allocated) == 0 {
		status.Allocated = nil
	}
	if len(status.Deserved) == 0 {
		status.Deserved = nil
	}
	active := metav1.ConditionFalse
	if state == schedulingv1beta1.QueueStateOpen {
		active = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{
		Type: QueueActive, Status: active, Reason: reason, Message: message, ObservedGeneration: q.Generation,
	})
	setGuaranteeRejected(&status.Conditions, q)
	return status
}

// setGuaranteeRejected sets QueueGuaranteeRejected while q's guarantee has entries not taken, and
// removes it once none is left.
func setGuaranteeRejected(conditions *[]metav1.Condition, q *schedulingv1beta1.Queue) {
	errs := q.Spec.Guarantee.RejectedEntries(field.NewPath("spec", "guarantee"))
	if len(errs) == 0 {
		meta.RemoveStatusCondition(conditions, QueueGuaranteeRejected)
		return
	}
	meta.SetStatusCondition(conditions, metav1.Condition{
		Type: QueueGuaranteeRejected, Status: metav1.ConditionTrue, Reason: "EntryNotTaken", ObservedGeneration: q.Generation,
		Message: errs.ToAggregate().Error() + "; nothing is guaranteed for these entries until they are mended",
	})
}

// deriveState is the queue state table: the requested state, Closed read as Closing while live work
// remains, and Unknown when the queue's place in the tree is not known (fault).
func deriveState(q *schedulingv1beta1.Queue, fault accounting.TreeFault, w workCounts) (state schedulingv1beta1.QueueState, reason, message string) {
	if fault.Reason != "" {
		return schedulingv1beta1.QueueStateUnknown, fault.Reason, fault.Detail + ": no new work is accepted or scheduled"
	}
	switch q.Spec.State {
	case schedulingv1beta1.QueueStateSuspended:
		return schedulingv1beta1.QueueStateSuspended, "Suspended",
			"suspended: new work is accepted but nothing new is allocated; running pods keep running"
	case schedulingv1beta1.QueueStateClosed:
		if w.live() {
			return schedulingv1beta1.QueueStateClosing, "Closing", fmt.Sprintf(
				"closing: no new work is accepted; waiting for %d live pods, %d unfinished PodGroups and %d unfinished QueueUnits",
				w.pods, w.Pending+w.Inqueue+w.Running+w.Unknown, w.Enqueued+w.unfinishedUnits)
		}
		return schedulingv1beta1.QueueStateClosed, "Closed", "closed: no live work remains; the queue may be deleted"
	default:
		return schedulingv1beta1.QueueStateOpen, "Open", "open: accepting and scheduling work"
	}
}

// cleanUpAfter deletes the finished PodGroups and QueueUnits that still name a deleted queue.
func (c *Controller) cleanUpAfter(ctx context.Context, queue string) error {
	api := c.acct.Client.SchedulingV1beta1()
	for _, pg := range c.acct.Store.PodGroupsOf(queue) {
		if pg.Status.Phase != schedulingv1beta1.PodGroupCompleted {
			continue
		}
		if err := api.PodGroups(pg.Namespace).Delete(ctx, pg.Name, preconditionUID(pg.UID)); ignoreNotFound(err) != nil {
			return err
		}
	}
	for _, u := range c.acct.Store.QueueUnitsOf(queue) {
		if u.Status.Phase != schedulingv1beta1.QueueUnitDequeued {
			continue
		}
		if err := api.QueueUnits(u.Namespace).Delete(ctx, u.Name, preconditionUID(u.UID)); ignoreNotFound(err) != nil {
			return err
		}
	}
	return nil
}
