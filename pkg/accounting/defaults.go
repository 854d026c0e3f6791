package accounting

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned"
)

// EnsureDefaultQueue creates the "default" queue, the queue of all work that names none, unless it
// exists. It is safe to call from every replica.
func EnsureDefaultQueue(ctx context.Context, client versioned.Interface) error {
	q := &schedulingv1beta1.Queue{
		ObjectMeta: metav1.ObjectMeta{Name: schedulingv1beta1.DefaultQueue},
		Spec:       schedulingv1beta1.QueueSpec{Weight: 1, State: schedulingv1beta1.QueueStateOpen},
	}
	_, err := client.SchedulingV1beta1().Queues().Create(ctx, q, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create queue %q: %w", q.Name, err)
	}
	return nil
}
