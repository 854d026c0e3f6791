package gangsource

import (
	"context"
	"fmt"

	schedulingv1beta1api "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	metav1apply "k8s.io/client-go/applyconfigurations/meta/v1"
	schedulingapply "k8s.io/client-go/applyconfigurations/scheduling/v1beta1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

// QueueAdmittedCondition is the condition queue-scheduler writes on a native PodGroup: whether its
// queue admitted it. kube-scheduler's own PodGroupInitiallyScheduled says the rest; each writer owns
// its condition (server-side apply, one field manager each).
const QueueAdmittedCondition = schedulingv1beta1.GroupName + "/QueueAdmitted"

// fieldManager owns QueueAdmittedCondition in native PodGroups' status.
const fieldManager = "queue-scheduler-controller"

// kubernetesSource is the native PodGroup of the Workload API.
type kubernetesSource struct{ client kubernetes.Interface }

// NewKubernetes is the native source on the core client.
func NewKubernetes(client kubernetes.Interface) Source { return &kubernetesSource{client: client} }

func (*kubernetesSource) Name() schedulingv1beta1.GangSource {
	return schedulingv1beta1.GangSourceKubernetes
}

func (*kubernetesSource) GroupVersionKind() schema.GroupVersionKind {
	return schedulingv1beta1api.SchemeGroupVersion.WithKind("PodGroup")
}

func (k *kubernetesSource) newInformer() cache.SharedIndexInformer {
	return informers.NewSharedInformerFactory(k.client, 0).Scheduling().V1beta1().PodGroups().Informer()
}

// Mirror takes the gang policy's minCount (a basic policy is no gang: minMember 1) and
// priorityClassName; the queue comes from queue-scheduler's queue label or annotation on the
// PodGroup.
func (*kubernetesSource) Mirror(obj metav1.Object) schedulingv1beta1.PodGroupSpec {
	pg := obj.(*schedulingv1beta1api.PodGroup)
	spec := schedulingv1beta1.PodGroupSpec{MinMember: 1, PriorityClassName: pg.Spec.PriorityClassName, Queue: queueOf(pg)}
	if gang := pg.Spec.SchedulingPolicy.Gang; gang != nil {
		spec.MinMember = max(gang.MinCount, 1)
	}
	return spec
}

// Eager: a native PodGroup is queue-scheduler's once it names a queue with queue-scheduler's queue
// label or annotation, or once a pod of queue-scheduler names it; the API is kube-scheduler's too.
func (*kubernetesSource) Eager(obj metav1.Object) bool { return queueOf(obj) != "" }

// WriteStatus applies the QueueAdmitted condition when it changed.
func (k *kubernetesSource) WriteStatus(ctx context.Context, obj metav1.Object, m Mirror) error {
	pg := obj.(*schedulingv1beta1api.PodGroup)
	want := queueAdmitted(m)
	if was := meta.FindStatusCondition(pg.Status.Conditions, QueueAdmittedCondition); was != nil &&
		was.Status == want.Status && was.Reason == want.Reason && was.Message == want.Message {
		return nil
	}
	condition := metav1apply.Condition().WithType(want.Type).WithStatus(want.Status).WithReason(want.Reason).
		WithMessage(want.Message).WithLastTransitionTime(metav1.NewTime(m.Now)).WithObservedGeneration(pg.Generation)
	apply := schedulingapply.PodGroup(pg.Name, pg.Namespace).WithStatus(schedulingapply.PodGroupStatus().WithConditions(condition))
	_, err := k.client.SchedulingV1beta1().PodGroups(pg.Namespace).ApplyStatus(ctx, apply, metav1.ApplyOptions{FieldManager: fieldManager, Force: true})
	return err
}

// queueAdmitted is the QueueAdmitted condition of a native PodGroup, given its mirror.
func queueAdmitted(m Mirror) metav1.Condition {
	c := metav1.Condition{Type: QueueAdmittedCondition, Status: metav1.ConditionFalse, Reason: "Pending",
		Message: "waiting for its queue to admit it"}
	switch {
	case m.Refusal != "":
		c.Reason, c.Message = "NotAdmitted", m.Refusal
	case m.PodGroup == nil:
	case m.PodGroup.Status.Phase != "" && m.PodGroup.Status.Phase != schedulingv1beta1.PodGroupPending:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, "Admitted", fmt.Sprintf("admitted to queue %q", m.Queue)
	default:
		if u := meta.FindStatusCondition(m.PodGroup.Status.Conditions, schedulingv1beta1.PodGroupUnschedulable); u != nil && u.Status == metav1.ConditionTrue {
			c.Reason, c.Message = u.Reason, u.Message
		}
	}
	return c
}
