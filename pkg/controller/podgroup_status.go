package controller

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

// memberCounts is how a PodGroup's members stand.
type memberCounts struct {
	pending, bound, running, succeeded, failed int32
}

func countMembers(pods []*v1.Pod) memberCounts {
	var m memberCounts
	for _, pod := range pods {
		switch {
		case pod.Status.Phase == v1.PodSucceeded:
			m.succeeded++
		case pod.Status.Phase == v1.PodFailed:
			m.failed++
		case pod.DeletionTimestamp != nil:
		case pod.Status.Phase == v1.PodRunning:
			m.running++
			m.bound++
		case pod.Spec.NodeName != "":
			m.bound++
		default:
			m.pending++
		}
	}
	return m
}

// podGroupPhase moves a PodGroup along Pending → Inqueue → Running → Completed, to Unknown when
// running members fall below minMember after it ran. A group is admitted (Inqueue) while its queue
// schedules new work.
func podGroupPhase(pg *schedulingv1beta1.PodGroup, m memberCounts, queueSchedules bool) schedulingv1beta1.PodGroupPhase {
	minMember := max(pg.Spec.MinMember, 1)
	previous := pg.Status.Phase
	switch {
	case previous == schedulingv1beta1.PodGroupCompleted:
		return schedulingv1beta1.PodGroupCompleted
	case m.succeeded+m.failed > 0 && m.pending+m.bound == 0 && m.succeeded >= minMember:
		return schedulingv1beta1.PodGroupCompleted
	case m.running >= minMember:
		return schedulingv1beta1.PodGroupRunning
	case previous == schedulingv1beta1.PodGroupRunning || previous == schedulingv1beta1.PodGroupUnknown:
		return schedulingv1beta1.PodGroupUnknown
	case previous == schedulingv1beta1.PodGroupInqueue || queueSchedules:
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
	pg, err := c.acct.PodGroups().PodGroups(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	status := c.desiredPodGroupStatus(pg)
	if apiequality.Semantic.DeepEqual(status, pg.Status) {
		return nil
	}
	pg = pg.DeepCopy()
	pg.Status = status
	_, err = c.acct.Client.SchedulingV1beta1().PodGroups(namespace).UpdateStatus(ctx, pg, metav1.UpdateOptions{})
	return ignoreGoneOrStale(err)
}

func (c *Controller) desiredPodGroupStatus(pg *schedulingv1beta1.PodGroup) schedulingv1beta1.PodGroupStatus {
	objs, _ := c.membersIndexer.ByIndex(byGroup, pg.Namespace+"/"+pg.Name)
	pods := make([]*v1.Pod, 0, len(objs))
	for _, o := range objs {
		if pod, ok := o.(*v1.Pod); ok {
			pods = append(pods, pod)
		}
	}
	m := countMembers(pods)
	q, ok := c.acct.Queue(c.acct.QueueOfPodGroup(pg))
	schedules := ok && q.SchedulingState() != schedulingv1beta1.QueueStateSuspended &&
		q.SchedulingState() != schedulingv1beta1.QueueStateUnknown
	status := schedulingv1beta1.PodGroupStatus{
		Phase:              podGroupPhase(pg, m, schedules),
		Running:            m.running,
		Succeeded:          m.succeeded,
		Failed:             m.failed,
		Conditions:         append([]metav1.Condition(nil), pg.Status.Conditions...),
		ObservedGeneration: pg.Generation,
	}
	minMember := max(pg.Spec.MinMember, 1)
	if m.bound+m.succeeded+m.failed >= minMember {
		meta.SetStatusCondition(&status.Conditions, metav1.Condition{
			Type: schedulingv1beta1.PodGroupScheduled, Status: metav1.ConditionTrue, Reason: "MinMemberScheduled",
			Message:            fmt.Sprintf("%d/%d members scheduled", m.bound+m.succeeded+m.failed, minMember),
			ObservedGeneration: pg.Generation,
		})
	}
	return status
}
