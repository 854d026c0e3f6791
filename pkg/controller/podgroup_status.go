package controller

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/gangs"
	"github.com/queue-scheduler/queue-scheduler/pkg/metrics"
)

// memberCounts is how a PodGroup's members stand: each member is counted once, by the first of
// succeeded, failed, being deleted (not counted), running, bound and pending that it is. running,
// succeeded and scheduled (bound, running or finished) are counted per task too, for the gang rule.
type memberCounts struct {
	pending, bound, running, succeeded, failed         int32
	runningMembers, succeededMembers, scheduledMembers gangs.Members
}

func countMembers(pods []*v1.Pod) memberCounts {
	var m memberCounts
	for _, pod := range pods {
		switch {
		case pod.Status.Phase == v1.PodSucceeded:
			m.succeeded++
			m.succeededMembers.Add(pod)
			m.scheduledMembers.Add(pod)
		case pod.Status.Phase == v1.PodFailed:
			m.failed++
			m.scheduledMembers.Add(pod)
		case pod.DeletionTimestamp != nil:
		case pod.Status.Phase == v1.PodRunning:
			m.running++
			m.bound++
			m.runningMembers.Add(pod)
			m.scheduledMembers.Add(pod)
		case pod.Spec.NodeName != "":
			m.bound++
			m.scheduledMembers.Add(pod)
		default:
			m.pending++
		}
	}
	return m
}

// podGroupPhase moves a PodGroup along Pending → Inqueue → Running → Completed, to Unknown when
// running members no longer make the gang whole after it ran (gangs.Complete: minMember, and the
// tasks' minimums where they apply). admitted says whether a Pending group may enter its queue now.
func podGroupPhase(pg *schedulingv1beta1.PodGroup, m memberCounts, admitted bool) schedulingv1beta1.PodGroupPhase {
	previous := pg.Status.Phase
	switch {
	case previous == schedulingv1beta1.PodGroupCompleted:
		return schedulingv1beta1.PodGroupCompleted
	case m.succeeded+m.failed > 0 && m.pending+m.bound == 0 && gangs.Complete(pg, m.succeededMembers):
		return schedulingv1beta1.PodGroupCompleted
	case gangs.Complete(pg, m.runningMembers):
		return schedulingv1beta1.PodGroupRunning
	case previous == schedulingv1beta1.PodGroupRunning || previous == schedulingv1beta1.PodGroupUnknown:
		return schedulingv1beta1.PodGroupUnknown
	case previous == schedulingv1beta1.PodGroupInqueue || admitted:
		return schedulingv1beta1.PodGroupInqueue
	default:
		return schedulingv1beta1.PodGroupPending
	}
}

// syncPodGroup writes a PodGroup's phase, member counts and Scheduled condition if they changed.
func (c *Controller) syncPodGroup(ctx context.Context, key string) error {
	namespace, name, err := splitKey(key)
	if err != nil {
		return nil
	}
	pg, err := c.acct.Store.PodGroups().PodGroups(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if isPending(pg) && takesRoom(pg) {
		// Whether it enters its queue is decided in order with the queue's other groups that take room.
		c.enqueueAdmission(c.acct.Store.QueueOfPodGroup(pg))
		return nil
	}
	a := admission{admitted: pg.Status.Phase == schedulingv1beta1.PodGroupInqueue}
	if isPending(pg) {
		a = c.admitPodGroup(pg)
	}
	return c.writePodGroupStatus(ctx, pg, c.neverWhole(pg, a))
}

// neverWhole adds to the admission of a group in its queue, not running yet, that its members ask
// together for more than a capability of the queue or an ancestor (as Gang holds them): its
// Unschedulable condition then says so, with the reason ExceedsCapability.
func (c *Controller) neverWhole(pg *schedulingv1beta1.PodGroup, a admission) admission {
	if !a.admitted || a.refusal != "" {
		return a
	}
	if r := c.acct.GangNeverFits(c.acct.Snapshot(), pg); r != nil {
		a.refusal, a.reason = r.Message, ReasonExceedsCapability
	}
	return a
}

// writePodGroupStatus writes the PodGroup's phase, member counts and conditions if they changed;
// a says whether it may be in its queue, and why not.
func (c *Controller) writePodGroupStatus(ctx context.Context, pg *schedulingv1beta1.PodGroup, a admission) error {
	status := desiredPodGroupStatus(pg, c.membersOf(pg), a)
	setReservedCondition(pg, &status, c.reservationOf(pg))
	keepStart(&status.Conditions, groupWaits(status))
	if apiequality.Semantic.DeepEqual(status, pg.Status) {
		return nil
	}
	updated := pg.DeepCopy()
	updated.Status = status
	if _, err := c.acct.Client.SchedulingV1beta1().PodGroups(pg.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{}); err != nil {
		return ignoreGoneOrStale(err)
	}
	c.countPhaseChange(pg, status.Phase)
	return nil
}

// countPhaseChange records a PodGroup's move out of Pending (an admission) and to Running (its time
// from creation), once: the write of the new phase succeeded, and the next sync starts from it.
func (c *Controller) countPhaseChange(pg *schedulingv1beta1.PodGroup, phase schedulingv1beta1.PodGroupPhase) {
	if phase == pg.Status.Phase {
		return
	}
	queue := c.acct.Store.QueueOfPodGroup(pg)
	if isPending(pg) && phase != schedulingv1beta1.PodGroupPending {
		// Admitted: a group without minResources may run before its Inqueue is written, and skip it.
		metrics.PodGroupAdmissions.WithLabelValues(queue).Inc()
	}
	if phase == schedulingv1beta1.PodGroupRunning {
		metrics.PodGroupTimeToRunning.WithLabelValues(queue).Observe(metrics.SinceCreation(pg.CreationTimestamp.Time, c.clock.Now()))
	}
}

// membersOf returns the PodGroup's pods, finished ones included.
func (c *Controller) membersOf(pg *schedulingv1beta1.PodGroup) []*v1.Pod {
	return c.membersByKey(pg.Namespace + "/" + pg.Name)
}

// membersByKey returns the pods of the PodGroup key ("namespace/name"): the labelled ones, finished
// ones included, and the live ones that came past the webhook and name the gang only by its source's
// PodGroup (a finished one of those is not seen: the scheduler's informer drops it).
func (c *Controller) membersByKey(key string) []*v1.Pod {
	objs, _ := c.membersIndexer.ByIndex(byGroup, key)
	pods := make([]*v1.Pod, 0, len(objs))
	for _, o := range objs {
		if pod, ok := o.(*v1.Pod); ok {
			pods = append(pods, pod)
		}
	}
	unlabeled := c.acct.Gangs.UnlabeledMembers(key)
	if len(unlabeled) == 0 {
		return pods
	}
	// A pod labelled since the scheduler's informer saw it may be in both stores.
	seen := make(map[types.UID]bool, len(pods))
	for _, pod := range pods {
		seen[pod.UID] = true
	}
	for _, pod := range unlabeled {
		if !seen[pod.UID] {
			pods = append(pods, pod)
		}
	}
	return pods
}

// desiredPodGroupStatus is the status a PodGroup should have, given its members and whether it is
// admitted to its queue (and why not): a pure function of its inputs.
func desiredPodGroupStatus(pg *schedulingv1beta1.PodGroup, pods []*v1.Pod, a admission) schedulingv1beta1.PodGroupStatus {
	m := countMembers(pods)
	status := schedulingv1beta1.PodGroupStatus{
		Phase:              podGroupPhase(pg, m, a.admitted),
		Running:            m.running,
		Succeeded:          m.succeeded,
		Failed:             m.failed,
		Conditions:         append([]metav1.Condition(nil), pg.Status.Conditions...),
		ObservedGeneration: pg.Generation,
	}
	setPodGroupConditions(pg, &status, m, a)
	return status
}

// setPodGroupConditions says why a group is not admitted, and that it was scheduled once minMember
// members were bound, which also ends an earlier Unschedulable condition.
func setPodGroupConditions(pg *schedulingv1beta1.PodGroup, status *schedulingv1beta1.PodGroupStatus, m memberCounts, a admission) {
	var was metav1.Condition
	if c := meta.FindStatusCondition(status.Conditions, schedulingv1beta1.PodGroupUnschedulable); c != nil {
		was = *c
	}
	switch {
	case a.refusal != "":
		meta.SetStatusCondition(&status.Conditions, metav1.Condition{
			Type: schedulingv1beta1.PodGroupUnschedulable, Status: metav1.ConditionTrue, Reason: a.reason,
			Message: a.refusal, ObservedGeneration: pg.Generation,
		})
	case status.Phase != schedulingv1beta1.PodGroupPending && (was.Reason == ReasonNotAdmitted || was.Reason == ReasonExceedsCapability):
		meta.SetStatusCondition(&status.Conditions, metav1.Condition{
			Type: schedulingv1beta1.PodGroupUnschedulable, Status: metav1.ConditionFalse, Reason: "Admitted",
			Message: "admitted to its queue", ObservedGeneration: pg.Generation,
		})
	}
	scheduled := m.bound + m.succeeded + m.failed
	if !gangs.Complete(pg, m.scheduledMembers) {
		return
	}
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{
		Type: schedulingv1beta1.PodGroupScheduled, Status: metav1.ConditionTrue, Reason: "MinMemberScheduled",
		Message:            fmt.Sprintf("%d/%d members scheduled", scheduled, pg.MinMemberOrOne()),
		ObservedGeneration: pg.Generation,
	})
	if was.Status == metav1.ConditionTrue {
		meta.SetStatusCondition(&status.Conditions, metav1.Condition{
			Type: schedulingv1beta1.PodGroupUnschedulable, Status: metav1.ConditionFalse, Reason: "Scheduled",
			Message: "minMember members scheduled", ObservedGeneration: pg.Generation,
		})
	}
}
