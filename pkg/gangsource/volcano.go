package gangsource

import (
	"context"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	vcv1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"
	vcclient "volcano.sh/apis/pkg/client/clientset/versioned"
	vcinformers "volcano.sh/apis/pkg/client/informers/externalversions"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

// volcano is Volcano's PodGroup, of volcano.sh/apis.
type volcano struct{ client vcclient.Interface }

// NewVolcano is the Volcano source on its generated client.
func NewVolcano(client vcclient.Interface) Source { return &volcano{client: client} }

func (*volcano) Name() schedulingv1beta1.GangSource { return schedulingv1beta1.GangSourceVolcano }

func (*volcano) GroupVersionKind() schema.GroupVersionKind {
	return vcv1beta1.SchemeGroupVersion.WithKind("PodGroup")
}

func (v *volcano) newInformer() cache.SharedIndexInformer {
	return vcinformers.NewSharedInformerFactory(v.client, 0).Scheduling().V1beta1().PodGroups().Informer()
}

// Mirror takes minMember, minTaskMember, minResources, queue (a queue-scheduler queue of that name)
// and priorityClassName.
func (*volcano) Mirror(obj metav1.Object) schedulingv1beta1.PodGroupSpec {
	pg := obj.(*vcv1beta1.PodGroup)
	spec := schedulingv1beta1.PodGroupSpec{
		MinMember:         max(pg.Spec.MinMember, 1),
		Queue:             pg.Spec.Queue,
		PriorityClassName: pg.Spec.PriorityClassName,
	}
	if len(pg.Spec.MinTaskMember) > 0 {
		spec.MinTaskMember = maps.Clone(pg.Spec.MinTaskMember)
	}
	if pg.Spec.MinResources != nil {
		spec.MinResources = *pg.Spec.MinResources
	}
	if spec.Queue == "" {
		spec.Queue = queueOf(pg)
	}
	return spec
}

// Eager: every PodGroup of this API is queue-scheduler's while the source is taken.
func (*volcano) Eager(metav1.Object) bool { return true }

// WriteStatus writes the mirror's phase, counts and conditions, which follow Volcano's own (Pending,
// Inqueue, Running, Unknown, Completed; Unschedulable and Scheduled). Volcano's CRD has no status
// subresource: the whole object is updated, at the version read.
func (v *volcano) WriteStatus(ctx context.Context, obj metav1.Object, m Mirror) error {
	pg := obj.(*vcv1beta1.PodGroup)
	status := volcanoStatus(pg, m)
	if apiequality.Semantic.DeepEqual(status, pg.Status) {
		return nil
	}
	updated := pg.DeepCopy()
	updated.Status = status
	_, err := v.client.SchedulingV1beta1().PodGroups(pg.Namespace).Update(ctx, updated, metav1.UpdateOptions{})
	return err
}

// volcanoStatus is the status of a Volcano PodGroup, given its mirror.
func volcanoStatus(pg *vcv1beta1.PodGroup, m Mirror) vcv1beta1.PodGroupStatus {
	status := *pg.Status.DeepCopy()
	if m.Refusal != "" {
		status.Phase = vcv1beta1.PodGroupPending
		setVolcanoCondition(&status, metav1.Condition{Type: string(vcv1beta1.PodGroupUnschedulableType), Status: metav1.ConditionTrue,
			Reason: "NotAdmitted", Message: m.Refusal}, m.Now)
		return status
	}
	if m.PodGroup == nil {
		return status
	}
	status.Phase = vcv1beta1.PodGroupPhase(m.PodGroup.Status.Phase)
	if status.Phase == "" {
		status.Phase = vcv1beta1.PodGroupPending
	}
	status.Running, status.Succeeded, status.Failed = m.PodGroup.Status.Running, m.PodGroup.Status.Succeeded, m.PodGroup.Status.Failed
	for _, c := range m.PodGroup.Status.Conditions {
		setVolcanoCondition(&status, c, m.Now)
	}
	return status
}

// setVolcanoCondition sets a condition of queue-scheduler's in Volcano's form, keeping the time of
// the last transition when its status did not change, else taking the condition's, or now.
func setVolcanoCondition(status *vcv1beta1.PodGroupStatus, c metav1.Condition, now time.Time) {
	want := vcv1beta1.PodGroupCondition{Type: vcv1beta1.PodGroupConditionType(c.Type), Status: corev1.ConditionStatus(c.Status),
		LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message}
	for i := range status.Conditions {
		if status.Conditions[i].Type != want.Type {
			continue
		}
		if status.Conditions[i].Status == want.Status {
			want.LastTransitionTime = status.Conditions[i].LastTransitionTime
		}
		status.Conditions[i] = want
		return
	}
	if want.LastTransitionTime.IsZero() {
		want.LastTransitionTime = metav1.NewTime(now)
	}
	status.Conditions = append(status.Conditions, want)
}
