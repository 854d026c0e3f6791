package controller

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/rules"
)

// Annotations a cascade leaves on a child, so that reopening or resuming the parent restores only the
// children the cascade changed, to the state each had before.
const (
	CascadedByAnnotation         = rules.CascadedByAnnotation
	StateBeforeCascadeAnnotation = rules.StateBeforeCascadeAnnotation
)

// cascade carries a queue's requested state to its children: Closed closes every child, Suspended
// suspends the Open ones, and Open restores those it changed. Each child passes it on when synced.
func (c *Controller) cascade(ctx context.Context, parent *schedulingv1beta1.Queue) error {
	for _, child := range c.acct.Store.Children(parent.Name) {
		updated, changed := cascadeChild(parent, child)
		if !changed {
			continue
		}
		_, err := c.acct.Client.SchedulingV1beta1().Queues().Update(ctx, updated, metav1.UpdateOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return err
		}
		klog.FromContext(ctx).V(2).Info("Cascaded queue state", "parent", parent.Name, "child", child.Name, "state", updated.Spec.State)
		c.recorder.Eventf(updated, "Normal", "StateCascaded", "state set to %s by parent queue %q (was %s)",
			updated.Spec.State, parent.Name, child.Spec.State)
	}
	return nil
}

// cascadeChild returns the child as the parent's requested state wants it, and whether that differs.
func cascadeChild(parent, child *schedulingv1beta1.Queue) (*schedulingv1beta1.Queue, bool) {
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
		updated.Annotations[StateBeforeCascadeAnnotation] = string(stateOrOpen(child.Spec.State))
	}
	updated.Spec.State = want
	return updated, true
}

// restored returns the child with the state it had before its parent's cascade.
func restored(child *schedulingv1beta1.Queue) *schedulingv1beta1.Queue {
	updated := child.DeepCopy()
	updated.Spec.State = stateOrOpen(schedulingv1beta1.QueueState(child.Annotations[StateBeforeCascadeAnnotation]))
	delete(updated.Annotations, CascadedByAnnotation)
	delete(updated.Annotations, StateBeforeCascadeAnnotation)
	return updated
}

func stateOrOpen(s schedulingv1beta1.QueueState) schedulingv1beta1.QueueState {
	if s == "" {
		return schedulingv1beta1.QueueStateOpen
	}
	return s
}
