package validation

import (
	"fmt"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"

	busv1alpha1 "github.com/queue-scheduler/queue-scheduler/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

// AcceptsWork checks that queue may take new work: it exists, is a leaf, and is Open or Suspended.
// Work joining what the queue already accepted (a pod of an existing PodGroup) is also admitted while
// the queue is Closing, so that a job's replacement pod cannot keep its queue from closing.
func AcceptsWork(path *field.Path, queue string, joining bool, view View) field.ErrorList {
	q, ok := view.Queue(queue)
	switch {
	case queue == schedulingv1beta1.RootQueue:
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf("queue %q is the root of the queue hierarchy: it takes no work", queue))}
	case !ok:
		return field.ErrorList{field.NotFound(path, queue)}
	case len(view.Children(queue)) > 0:
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf("queue %q has child queues: only leaf queues take work", queue))}
	}
	switch {
	case q.Spec.Parent != "" && !exists(view, q.Spec.Parent):
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf("queue %q is Unknown: its parent queue %q does not exist; it accepts no new work", queue, q.Spec.Parent))}
	case q.Spec.State != schedulingv1beta1.QueueStateClosed:
		return nil
	case joining && q.Status.State != schedulingv1beta1.QueueStateClosed:
		return nil
	}
	return field.ErrorList{field.Forbidden(path, fmt.Sprintf("queue %q is %s: it accepts no new work", queue, closedOrClosing(q)))}
}

// ValidateQueueUnit checks a new QueueUnit's queue (old == nil), or what an update may change: only
// the priority while Enqueued, and nothing once Dequeued.
func ValidateQueueUnit(u, old *schedulingv1beta1.QueueUnit, queue string, view View) field.ErrorList {
	if old == nil {
		return AcceptsWork(specPath.Child("queue"), queue, false, view)
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

// ValidateCommand checks that a Command's target queue exists.
func ValidateCommand(cmd *busv1alpha1.Command, view View) field.ErrorList {
	if _, ok := view.Queue(cmd.Spec.Target.Name); !ok {
		return field.ErrorList{field.NotFound(specPath.Child("target", "name"), cmd.Spec.Target.Name)}
	}
	return nil
}

func exists(view View, queue string) bool {
	_, ok := view.Queue(queue)
	return ok
}
