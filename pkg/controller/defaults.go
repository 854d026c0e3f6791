package controller

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

// ensureQueues creates the root of the hierarchy and the default queue unless they exist. The default
// queue accepts work from every namespace; the root takes none. An existing default queue is left as
// its administrator set it.
func (c *Controller) ensureQueues(ctx context.Context) error {
	for _, name := range []string{schedulingv1beta1.RootQueue, schedulingv1beta1.DefaultQueue} {
		q := &schedulingv1beta1.Queue{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       schedulingv1beta1.QueueSpec{Weight: 1, State: schedulingv1beta1.QueueStateOpen},
		}
		if name == schedulingv1beta1.DefaultQueue {
			q.Spec.NamespaceSelector = &metav1.LabelSelector{}
		}
		_, err := c.acct.Client.SchedulingV1beta1().Queues().Create(ctx, q, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create queue %q: %w", name, err)
		}
	}
	return nil
}
