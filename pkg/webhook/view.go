package webhook

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
)

// liveLookupTimeout bounds a read from the API server when the cache has not seen a queue yet.
const liveLookupTimeout = 5 * time.Second

// view reads the shared caches, and the API server where the cache may lag behind a refusal: a queue
// created a moment before the pod that names it must not be reported missing, nor a child deleted a
// moment before its parent reported present.
type view struct {
	*accounting.Accounting
}

// Queue returns the named queue from the cache, else from the API server.
func (v view) Queue(name string) (*schedulingv1beta1.Queue, bool) {
	if q, ok := v.Accounting.Queue(name); ok {
		return q, true
	}
	if name == "" {
		return nil, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), liveLookupTimeout)
	defer cancel()
	q, err := v.Client.SchedulingV1beta1().Queues().Get(ctx, name, metav1.GetOptions{})
	return q, err == nil
}

// Children returns the child queues of name that the API server confirms: the cache may still hold a
// child deleted a moment before, and a refusal ("has child queues") must not rest on it.
func (v view) Children(name string) []*schedulingv1beta1.Queue {
	cached := v.Accounting.Children(name)
	if len(cached) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), liveLookupTimeout)
	defer cancel()
	var live []*schedulingv1beta1.Queue
	for _, c := range cached {
		q, err := v.Client.SchedulingV1beta1().Queues().Get(ctx, c.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			live = append(live, c) // the API cannot tell: keep the cache's word
		case q.Spec.Parent == name:
			live = append(live, q)
		}
	}
	return live
}
