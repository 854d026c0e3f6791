package rules

import (
	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

// CascadeChild returns the child as the parent's requested state wants it, and whether that differs:
// Closed closes every child, Suspended suspends the Open ones, and Open restores those a cascade
// changed, to the state each had before (the annotations a cascade leaves say which and what).
func CascadeChild(parent, child *schedulingv1beta1.Queue) (*schedulingv1beta1.Queue, bool) {
	ownCascade := child.Annotations[CascadedByAnnotation] == parent.Name
	want := child.Spec.State
	switch parent.Spec.State {
	case schedulingv1beta1.QueueStateClosed:
		want = schedulingv1beta1.QueueStateClosed
	case schedulingv1beta1.QueueStateSuspended:
		if child.Spec.State == schedulingv1beta1.QueueStateOpen || child.Spec.State == "" {
			want = schedulingv1beta1.QueueStateSuspended
		}
	default:
		if ownCascade {
			return restored(child), true
		}
		return child, false
	}
	if want == child.Spec.State {
		return child, false
	}
	updated := child.DeepCopy()
	if updated.Annotations == nil {
		updated.Annotations = map[string]string{}
	}
	if !ownCascade {
		updated.Annotations[CascadedByAnnotation] = parent.Name
		updated.Annotations[StateBeforeCascadeAnnotation] = string(StateOrOpen(child.Spec.State))
	}
	updated.Spec.State = want
	return updated, true
}

// restored returns the child with the state it had before its parent's cascade.
func restored(child *schedulingv1beta1.Queue) *schedulingv1beta1.Queue {
	updated := child.DeepCopy()
	updated.Spec.State = StateOrOpen(schedulingv1beta1.QueueState(child.Annotations[StateBeforeCascadeAnnotation]))
	delete(updated.Annotations, CascadedByAnnotation)
	delete(updated.Annotations, StateBeforeCascadeAnnotation)
	return updated
}

// StateOrOpen is s, Open when it is empty.
func StateOrOpen(s schedulingv1beta1.QueueState) schedulingv1beta1.QueueState {
	if s == "" {
		return schedulingv1beta1.QueueStateOpen
	}
	return s
}
