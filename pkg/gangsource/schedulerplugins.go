package gangsource

import (
	"context"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	spv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"
	spclient "sigs.k8s.io/scheduler-plugins/pkg/generated/clientset/versioned"
	spinformers "sigs.k8s.io/scheduler-plugins/pkg/generated/informers/externalversions"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/gangs"
)

// schedulerPlugins is the coscheduling PodGroup of sigs.k8s.io/scheduler-plugins.
type schedulerPlugins struct{ client spclient.Interface }

// NewSchedulerPlugins is the scheduler-plugins source on its generated client.
func NewSchedulerPlugins(client spclient.Interface) Source { return &schedulerPlugins{client: client} }

func (*schedulerPlugins) Name() schedulingv1beta1.GangSource {
	return schedulingv1beta1.GangSourceSchedulerPlugins
}

func (*schedulerPlugins) GroupVersionKind() schema.GroupVersionKind {
	return spv1alpha1.SchemeGroupVersion.WithKind("PodGroup")
}

func (s *schedulerPlugins) newInformer() cache.SharedIndexInformer {
	return spinformers.NewSharedInformerFactory(s.client, 0).Scheduling().V1alpha1().PodGroups().Informer()
}

// Mirror takes minMember, minResources and scheduleTimeoutSeconds; the queue comes from
// queue-scheduler's queue label or annotation on the PodGroup.
func (*schedulerPlugins) Mirror(obj metav1.Object) schedulingv1beta1.PodGroupSpec {
	pg := obj.(*spv1alpha1.PodGroup)
	return schedulingv1beta1.PodGroupSpec{
		MinMember:              max(pg.Spec.MinMember, 1),
		MinResources:           pg.Spec.MinResources,
		ScheduleTimeoutSeconds: pg.Spec.ScheduleTimeoutSeconds,
		Queue:                  queueOf(pg),
	}
}

// Eager: every PodGroup of this API is queue-scheduler's while the source is taken.
func (*schedulerPlugins) Eager(metav1.Object) bool { return true }

// WriteStatus writes the phase and counts as scheduler-plugins' PodGroup controller does, with one
// more rule: a group its queue has not admitted stays Pending.
func (s *schedulerPlugins) WriteStatus(ctx context.Context, obj metav1.Object, m Mirror) error {
	pg := obj.(*spv1alpha1.PodGroup)
	status := schedulerPluginsStatus(pg, m)
	if apiequality.Semantic.DeepEqual(status, pg.Status) {
		return nil
	}
	updated := pg.DeepCopy()
	updated.Status = status
	_, err := s.client.SchedulingV1alpha1().PodGroups(pg.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	return err
}

// schedulerPluginsStatus is the status scheduler-plugins' controller would write, given the mirror.
func schedulerPluginsStatus(pg *spv1alpha1.PodGroup, m Mirror) spv1alpha1.PodGroupStatus {
	status := *pg.Status.DeepCopy()
	if status.Phase == spv1alpha1.PodGroupFinished || status.Phase == spv1alpha1.PodGroupFailed {
		return status
	}
	c := count(m.Members)
	status.Running, status.Succeeded, status.Failed = c.running, c.succeeded, c.failed
	if len(m.Members) > 0 {
		status.OccupiedBy = occupiedBy(m.Members[0])
	}
	// The phases of scheduler-plugins, on the one gang rule (package gangs) applied to the group.
	group := &schedulingv1beta1.PodGroup{Spec: (&schedulerPlugins{}).Mirror(pg)}
	whole := func(in ...corev1.PodPhase) bool {
		return gangs.Complete(group, gangs.Count(m.Members, func(p *corev1.Pod) bool { return slices.Contains(in, p.Status.Phase) }))
	}
	admitted := m.PodGroup != nil && m.PodGroup.Status.Phase != "" && m.PodGroup.Status.Phase != schedulingv1beta1.PodGroupPending
	switch {
	case !admitted || !gangs.Complete(group, gangs.Count(m.Members, func(*corev1.Pod) bool { return true })):
		status.Phase = spv1alpha1.PodGroupPending
	case whole(corev1.PodSucceeded):
		status.Phase = spv1alpha1.PodGroupFinished
	case c.failed > 0 && whole(corev1.PodFailed, corev1.PodRunning, corev1.PodSucceeded):
		status.Phase = spv1alpha1.PodGroupFailed
	case whole(corev1.PodRunning, corev1.PodSucceeded):
		status.Phase = spv1alpha1.PodGroupRunning
	default:
		status.Phase = spv1alpha1.PodGroupScheduling
	}
	if status.Phase == spv1alpha1.PodGroupScheduling && pg.Status.Phase != spv1alpha1.PodGroupScheduling {
		status.ScheduleStartTime = metav1.NewTime(m.Now.Truncate(time.Second))
	}
	return status
}

// occupiedBy names the owners of a member as scheduler-plugins does: "namespace/name" of each,
// sorted and joined by commas.
func occupiedBy(pod *corev1.Pod) string {
	owners := make([]string, 0, len(pod.OwnerReferences))
	for _, ref := range pod.OwnerReferences {
		owners = append(owners, pod.Namespace+"/"+ref.Name)
	}
	slices.Sort(owners)
	return strings.Join(owners, ",")
}

// counts are how a gang's members stand.
type counts struct{ running, succeeded, failed int32 }

func count(pods []*corev1.Pod) counts {
	var c counts
	for _, pod := range pods {
		switch pod.Status.Phase {
		case corev1.PodRunning:
			c.running++
		case corev1.PodSucceeded:
			c.succeeded++
		case corev1.PodFailed:
			c.failed++
		}
	}
	return c
}
