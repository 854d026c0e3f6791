package rules

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"

	busv1alpha1 "github.com/queue-scheduler/queue-scheduler/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
)

// AcceptsWork checks that queue may take new work from namespace: it exists, is a leaf, is Open or
// Suspended, has a known place in the tree, and its namespaceSelector selects the namespace. Work
// joining what the queue already accepted (a pod of an existing PodGroup) is also admitted while the
// queue is Closing, so that a job's replacement pod cannot keep its queue from closing.
func AcceptsWork(path *field.Path, queue, namespace string, joining bool, view View) field.ErrorList {
	q, ok := view.Queue(queue)
	switch {
	case queue == schedulingv1beta1.RootQueue:
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf("queue %q is the root of the queue hierarchy: it takes no work", queue))}
	case !ok:
		return field.ErrorList{queueNotFound(path, queue, namespace, view)}
	}
	if fault := TreeFaultOf(q, view); fault.Reason != "" {
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf("queue %q is Unknown: %s; it accepts no new work", queue, fault.Detail))}
	}
	if len(view.Children(queue)) > 0 {
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf("queue %q has child queues: only leaf queues take work", queue))}
	}
	if refusal := view.NamespaceRefusal(q, namespace); refusal != "" {
		return field.ErrorList{field.Forbidden(path, refusal)}
	}
	switch {
	case q.Spec.State != schedulingv1beta1.QueueStateClosed:
		return nil
	case joining && q.Status.State != schedulingv1beta1.QueueStateClosed:
		return nil
	}
	return field.ErrorList{field.Forbidden(path, fmt.Sprintf("queue %q is %s: it accepts no new work", queue, closedOrClosing(q)))}
}

// FitsCapability refuses work whose request (a pod's, a Job's pod template's, a PodGroup's
// minResources, a QueueUnit's resource) exceeds on its own the capability of its queue or of one of
// the queue's ancestors: it could never run there. Each such resource is named, with the numbers.
func FitsCapability(path *field.Path, request corev1.ResourceList, queue string, view View) field.ErrorList {
	var errs field.ErrorList
	for name, limited := queue, 0; name != "" && name != schedulingv1beta1.RootQueue && limited <= MaxDepth; limited++ {
		q, ok := view.Queue(name)
		if !ok {
			break
		}
		for _, res := range policy.Exceeding(q.Spec.Capability, request) {
			want := request[res]
			errs = append(errs, field.Invalid(path.Key(string(res)), want.String(), policy.ExceedsMessage(q.Name, res, want, q.Spec.Capability[res])))
		}
		name = q.Spec.Parent
	}
	return errs
}

// ValidateQueueUnit checks a new QueueUnit's queue (old == nil), or what an update may change: only
// the priority while Enqueued, and nothing once Dequeued.
func ValidateQueueUnit(u, old *schedulingv1beta1.QueueUnit, queue string, view View) field.ErrorList {
	if old == nil {
		if errs := AcceptsWork(specPath.Child("queue"), queue, u.Namespace, false, view); len(errs) > 0 {
			return errs
		}
		return FitsCapability(specPath.Child("resource"), u.Spec.Resource, queue, view)
	}
	if apiequality.Semantic.DeepEqual(u.Spec, old.Spec) {
		return nil
	}
	if old.Status.Phase == schedulingv1beta1.QueueUnitDequeued {
		return field.ErrorList{field.Forbidden(specPath, fmt.Sprintf(
			"QueueUnit %s/%s was already Dequeued: its spec is immutable (the update arrived after the dequeue)", u.Namespace, u.Name))}
	}
	var errs field.ErrorList
	if !apiequality.Semantic.DeepEqual(u.Spec.ConsumerRef, old.Spec.ConsumerRef) {
		errs = append(errs, field.Forbidden(specPath.Child("consumerRef"), "only priority and priorityClassName may change while Enqueued"))
	}
	if u.Spec.Queue != old.Spec.Queue {
		errs = append(errs, field.Forbidden(specPath.Child("queue"), "only priority and priorityClassName may change while Enqueued"))
	}
	if !apiequality.Semantic.DeepEqual(u.Spec.Resource, old.Spec.Resource) {
		errs = append(errs, field.Forbidden(specPath.Child("resource"), "only priority and priorityClassName may change while Enqueued"))
	}
	return errs
}

// ValidateCommand checks that a Command's target queue exists and that the Command may operate it: it
// comes from the scheduler's own namespace (adminNamespace), where administrators work, or from a
// namespace the queue selects.
func ValidateCommand(cmd *busv1alpha1.Command, adminNamespace string, view View) field.ErrorList {
	path := specPath.Child("target", "name")
	q, ok := view.Queue(cmd.Spec.Target.Name)
	if !ok {
		return field.ErrorList{field.NotFound(path, cmd.Spec.Target.Name)}
	}
	if cmd.Namespace == adminNamespace {
		return nil
	}
	if refusal := view.NamespaceRefusal(q, cmd.Namespace); refusal != "" {
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf(
			"a Command may operate only a queue that selects its namespace, unless it comes from the scheduler's namespace %q: %s",
			adminNamespace, refusal))}
	}
	return nil
}

// ValidateQueueLabelUnchanged keeps a pod's queue label as admission decided it: a pod cannot move
// itself into another queue.
func ValidateQueueLabelUnchanged(pod, old *corev1.Pod) field.ErrorList {
	was, had := old.Labels[schedulingv1beta1.QueueLabel]
	is, has := pod.Labels[schedulingv1beta1.QueueLabel]
	if was == is && had == has {
		return nil
	}
	return field.ErrorList{field.Forbidden(field.NewPath("metadata", "labels").Key(schedulingv1beta1.QueueLabel),
		fmt.Sprintf("a pod's queue is decided when it is created and cannot change (was %q)", was))}
}

// ValidateOneGang refuses a pod that names two different PodGroups, in queue-scheduler's label or
// in another gang API's reference: a pod belongs to one gang. The error names the second reference.
func ValidateOneGang(pod *corev1.Pod) field.ErrorList {
	refs := schedulingv1beta1.GangRefs(pod)
	for _, ref := range refs[min(1, len(refs)):] {
		if ref.Name != refs[0].Name {
			return field.ErrorList{field.Invalid(gangRefPath(ref.Source), ref.Name, fmt.Sprintf(
				"the pod already names PodGroup %q in %s; a pod belongs to one gang", refs[0].Name, gangRefPath(refs[0].Source)))}
		}
	}
	return nil
}

// gangRefPath is the field in which a pod names a PodGroup of source.
func gangRefPath(source schedulingv1beta1.GangSource) *field.Path {
	switch source {
	case schedulingv1beta1.GangSourceSchedulerPlugins:
		return field.NewPath("metadata", "labels").Key(schedulingv1beta1.SchedulerPluginsPodGroupLabel)
	case schedulingv1beta1.GangSourceVolcano:
		return field.NewPath("metadata", "annotations").Key(schedulingv1beta1.VolcanoGroupNameAnnotation)
	case schedulingv1beta1.GangSourceKubernetes:
		return field.NewPath("spec", "schedulingGroup", "podGroupName")
	}
	return field.NewPath("metadata", "labels").Key(schedulingv1beta1.PodGroupLabel)
}
