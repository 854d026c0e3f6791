package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/metrics"
	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
)

// Reasons of the events a dequeue attempt records on its QueueUnit.
const (
	ReasonScheduleSucceeded = "ScheduleSucceeded"
	ReasonScheduleFailed    = "ScheduleFailed"
)

// dequeueKey is the one key of the units workqueue: a pass looks at every Enqueued unit, so that
// queues are served by share and their units by priority across the whole cluster.
const dequeueKey = "dequeue"

// orphanGrace is how long a unit may name a consumer that does not exist (it may be created just
// after the unit) before the unit is deleted. A unit whose consumerRef carries a UID is deleted as
// soon as that consumer is gone.
const orphanGrace = time.Minute

// snapshotBehind is when an admission or dequeue pass that found the accounting's snapshot behind a
// queue's change runs again: the queue's informer store has it take work, and the snapshot, which
// the accounting's handler of the same informer brings up to date, a moment later, still has it
// Suspended, or does not hold it yet. Deciding on it would refuse the work ahead and let in the work
// behind, or let work into a queue unchecked.
const snapshotBehind = 100 * time.Millisecond

// errBehind stops a dequeue pass that found the snapshot behind the queue's change.
var errBehind = errors.New("the snapshot is behind the queue's change")

func (c *Controller) enqueueDequeue() {
	c.enqueue(func(w *workqueues) workqueue.TypedRateLimitingInterface[string] { return w.units }, dequeueKey)
}

func (c *Controller) enqueueDequeueAfter(d time.Duration) {
	c.enqueueAfter(func(w *workqueues) workqueue.TypedRateLimitingInterface[string] { return w.units }, dequeueKey, d)
}

// syncUnits is one dequeue pass: it tidies the units (see tidy), then visits the queues
// with Enqueued units, least served first, and in each the units by priority, then age.
func (c *Controller) syncUnits(ctx context.Context, _ string) error {
	all, err := c.acct.Store.QueueUnits().List(labels.Everything())
	if err != nil {
		return err
	}
	waiting := map[string][]*schedulingv1beta1.QueueUnit{}
	var errs []error
	for _, u := range all {
		changed, err := c.tidy(ctx, u)
		errs = append(errs, err)
		if changed {
			continue
		}
		if !u.Dequeued() {
			queue := c.acct.Store.QueueOfQueueUnit(u)
			waiting[queue] = append(waiting[queue], u)
		}
	}
	c.unitsWaiting.Store(len(waiting) > 0)
	for _, queue := range c.byShare(waiting) {
		errs = append(errs, c.dequeueFrom(ctx, queue, waiting[queue]))
	}
	return utilerrors.NewAggregate(errs)
}

// byShare orders queue names by how much of their deserved share they hold, then by name.
func (c *Controller) byShare(waiting map[string][]*schedulingv1beta1.QueueUnit) []string {
	names := make([]string, 0, len(waiting))
	share := map[string]float64{}
	for name := range waiting {
		names = append(names, name)
		share[name] = c.acct.DominantShare(name)
	}
	sort.Slice(names, func(i, j int) bool {
		if share[names[i]] != share[names[j]] {
			return share[names[i]] < share[names[j]]
		}
		return names[i] < names[j]
	})
	return names
}

// dequeueFrom tries the queue's Enqueued units in order. A unit that does not fit does not stop the
// smaller ones behind it.
func (c *Controller) dequeueFrom(ctx context.Context, queue string, units []*schedulingv1beta1.QueueUnit) error {
	if held := c.queueHolds(queue); held != "" {
		var errs []error
		for _, u := range units {
			errs = append(errs, c.stillEnqueued(ctx, u, held))
		}
		return utilerrors.NewAggregate(errs)
	}
	priority := map[*schedulingv1beta1.QueueUnit]int32{}
	for _, u := range units {
		priority[u] = c.acct.Store.UnitPriority(u)
	}
	sort.SliceStable(units, func(i, j int) bool {
		return policy.Ahead(policy.PlaceOf(units[i], priority[units[i]]), policy.PlaceOf(units[j], priority[units[j]]))
	})
	var errs []error
	for _, u := range units {
		err := c.dequeue(ctx, queue, u)
		if errors.Is(err, errBehind) {
			c.enqueueDequeueAfter(snapshotBehind)
			break
		}
		errs = append(errs, err)
	}
	return utilerrors.NewAggregate(errs)
}

// queueHolds says why the queue admits no unit now, or "".
func (c *Controller) queueHolds(queue string) string {
	q, ok := c.acct.Store.Queue(queue)
	if !ok {
		return fmt.Sprintf("queue %q does not exist", queue)
	}
	switch s := c.acct.Store.SchedulingState(q); s {
	case schedulingv1beta1.QueueStateSuspended:
		return fmt.Sprintf("queue %q is Suspended: units stay Enqueued until it is resumed", queue)
	case schedulingv1beta1.QueueStateUnknown:
		return fmt.Sprintf("queue %q is Unknown: units stay Enqueued until its state is known", queue)
	}
	return ""
}

// dequeue admits one unit when its resource fits: it un-suspends the consumer, then records the unit
// Dequeued. A unit that does not fit stays Enqueued with the reason.
func (c *Controller) dequeue(ctx context.Context, queue string, u *schedulingv1beta1.QueueUnit) error {
	if q, ok := c.acct.Store.Queue(queue); ok {
		if refusal := c.acct.Store.NamespaceRefusal(q, u.Namespace); refusal != "" {
			return c.stillEnqueued(ctx, u, refusal)
		}
	}
	key := accounting.UnitWork(u)
	refusal := c.acct.AdmitWork(key, queue, u.Spec.Resource)
	switch {
	case refusal != nil && (refusal.Suspended || refusal.Unseen):
		return errBehind // queueHolds read the queue in the store, and open
	case refusal != nil:
		return c.stillEnqueued(ctx, u, "resource does not fit: "+refusal.Message)
	}
	if err := c.consumers.unsuspend(ctx, u.Namespace, u.Spec.ConsumerRef); err != nil {
		c.acct.ForgetWork(key)
		c.onWorkReleased(queue) // what others were refused for it in the meantime is free again
		if errors.As(err, new(errNoConsumer)) {
			return c.stillEnqueued(ctx, u, "waiting: "+err.Error())
		}
		if errors.As(err, new(errConsumerOutOfReach)) {
			c.enqueueDequeueAfter(remapAfter)
			return c.stillEnqueued(ctx, u, "waiting: "+err.Error())
		}
		return errors.Join(err, c.stillEnqueued(ctx, u, "cannot start the consumer: "+err.Error()))
	}
	message := fmt.Sprintf("dequeued from queue %q: its resource fits the queue's capability and fair share", queue)
	if err := c.writeUnitStatus(ctx, u, schedulingv1beta1.QueueUnitDequeued, message); err != nil {
		return err
	}
	c.recorder.Event(u, v1.EventTypeNormal, ReasonScheduleSucceeded, message)
	metrics.QueueUnitTimeToDequeued.WithLabelValues(queue).Observe(metrics.SinceCreation(u.CreationTimestamp.Time, c.clock.Now()))
	klog.FromContext(ctx).V(2).Info("QueueUnit dequeued", "queueUnit", klog.KObj(u), "queue", queue)
	return nil
}

// stillEnqueued records why a unit waits; the event is emitted only when the reason changes.
func (c *Controller) stillEnqueued(ctx context.Context, u *schedulingv1beta1.QueueUnit, message string) error {
	if u.Status.Phase == schedulingv1beta1.QueueUnitEnqueued && u.Status.Message == message {
		return nil
	}
	if err := c.writeUnitStatus(ctx, u, schedulingv1beta1.QueueUnitEnqueued, message); err != nil {
		return err
	}
	c.recorder.Event(u, v1.EventTypeWarning, ReasonScheduleFailed, message)
	return nil
}

// writeUnitStatus writes a unit's phase and message, with its ExpectedStart condition as the last
// refresh wrote it while it waits, and none once dequeued.
func (c *Controller) writeUnitStatus(ctx context.Context, u *schedulingv1beta1.QueueUnit, phase schedulingv1beta1.QueueUnitPhase, message string) error {
	status := schedulingv1beta1.QueueUnitStatus{Phase: phase, Message: message,
		Conditions: append([]metav1.Condition(nil), u.Status.Conditions...)}
	keepStart(&status.Conditions, phase != schedulingv1beta1.QueueUnitDequeued)
	return c.updateUnitStatus(ctx, u, status)
}

// updateUnitStatus writes status as the unit's.
func (c *Controller) updateUnitStatus(ctx context.Context, u *schedulingv1beta1.QueueUnit, status schedulingv1beta1.QueueUnitStatus) error {
	u = u.DeepCopy()
	u.Status = status
	_, err := c.acct.Client.SchedulingV1beta1().QueueUnits(u.Namespace).UpdateStatus(ctx, u, metav1.UpdateOptions{})
	return ignoreGoneOrStale(err)
}

// tidy deletes a unit whose consumer is gone (the cache's word checked with the API server), and
// makes a unit whose consumer exists its dependent, so that the garbage collector deletes it with the
// consumer. It says whether it changed the unit: the informer event of the change brings the unit
// back to the next pass.
func (c *Controller) tidy(ctx context.Context, u *schedulingv1beta1.QueueUnit) (bool, error) {
	consumer, state := c.consumers.get(u.Namespace, u.Spec.ConsumerRef)
	if consumer != nil {
		return c.ownedBy(ctx, u, consumer)
	}
	if state != consumerMissing {
		return false, nil
	}
	if age := c.clock.Since(u.CreationTimestamp.Time); u.Spec.ConsumerRef.UID == "" && age < orphanGrace {
		c.enqueueDequeueAfter(orphanGrace - age)
		return false, nil
	}
	// The informer's event brings the unit back once the cache has a consumer it missed. A consumer
	// out of reach is left to the dequeue pass, which says why the unit waits.
	if gone, err := c.consumers.goneFromServer(ctx, u.Namespace, u.Spec.ConsumerRef); err != nil || !gone {
		if errors.As(err, new(errConsumerOutOfReach)) {
			return false, nil
		}
		return false, err
	}
	err := c.acct.Client.SchedulingV1beta1().QueueUnits(u.Namespace).Delete(ctx, u.Name, preconditionUID(u.UID))
	if err = ignoreNotFound(err); err != nil {
		return false, err
	}
	c.acct.ForgetWork(accounting.UnitWork(u))
	klog.FromContext(ctx).V(2).Info("QueueUnit deleted: its consumer is gone", "queueUnit", klog.KObj(u))
	return true, nil
}

// ownedBy adds an owner reference to the consumer to a unit that has none, and says whether it did.
func (c *Controller) ownedBy(ctx context.Context, u *schedulingv1beta1.QueueUnit, consumer *unstructured.Unstructured) (bool, error) {
	for _, ref := range u.OwnerReferences {
		if ref.UID == consumer.GetUID() {
			return false, nil
		}
	}
	ref := u.Spec.ConsumerRef
	owner := metav1.OwnerReference{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: consumer.GetName(), UID: consumer.GetUID()}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"ownerReferences": append(u.DeepCopy().OwnerReferences, owner),
		"resourceVersion": u.ResourceVersion,
	}})
	if err != nil {
		return false, err
	}
	_, err = c.acct.Client.SchedulingV1beta1().QueueUnits(u.Namespace).Patch(ctx, u.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	return err == nil, ignoreGoneOrStale(err)
}

// consumerDone says whether a unit's consumer finished or is gone: its reservation ends.
func (c *Controller) consumerDone(u *schedulingv1beta1.QueueUnit) bool {
	switch c.consumers.state(u.Namespace, u.Spec.ConsumerRef) {
	case consumerMissing, consumerFinished:
		return true
	}
	return false
}

// onConsumer runs a pass, and syncs the queues, when a consumer that has units changes: it may have
// finished, freeing its reservation and letting a closing queue close, or be gone, leaving its units
// to clean up.
func (c *Controller) onConsumer(apiVersion, kind string, obj any) {
	m, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	units := c.acct.Store.UnitsOfConsumer(m.GetNamespace(), apiVersion, kind, m.GetName(), "")
	for _, u := range units {
		queue := c.acct.Store.QueueOfQueueUnit(u)
		c.enqueueQueue(queue)
		if u.Dequeued() && c.consumerDone(u) {
			// Its reservation ended: the capabilities above its queue counted it for the whole tree.
			c.onWorkReleased(queue)
		}
	}
	if len(units) > 0 {
		c.enqueueDequeue()
	}
}
