package webhook

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
)

// liveLookupTimeout bounds a read from the API server when the cache has not seen a queue yet.
const liveLookupTimeout = 5 * time.Second

// view reads the shared caches, and the API server for a queue the cache does not know yet: a queue
// created a moment before the pod that names it must not be reported missing.
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
