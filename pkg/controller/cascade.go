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
		updated, changed := rules.CascadeChild(parent, child)
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
