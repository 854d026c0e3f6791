package gang

import (
	"context"
	"sync"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned/scheme"
	listers "github.com/queue-scheduler/queue-scheduler/pkg/generated/listers/scheduling/v1beta1"
)

// ReasonGangUnschedulable is the reason of the Unschedulable condition and Warning event that say
// why a gang could not be placed.
const ReasonGangUnschedulable = "GangUnschedulable"

// maxReportRetries is how often a failed condition write is tried again before it waits for the
// next failure of the gang.
const maxReportRetries = 5

// failureReport writes, off the scheduling path, a PodGroup's Unschedulable condition and a Warning
// event whenever the reason its gang could not be placed changes.
type failureReport struct {
	client    versioned.Interface
	podGroups listers.PodGroupLister
	recorder  record.EventRecorder
	queue     workqueue.TypedRateLimitingInterface[types.NamespacedName]

	mu      sync.Mutex
	latest  map[types.NamespacedName]string
	written map[types.NamespacedName]string
}

// newFailureReport builds the report; its event broadcaster stops with ctx.
func newFailureReport(ctx context.Context, client versioned.Interface, events typedcorev1.EventsGetter, podGroups listers.PodGroupLister,
	clk clock.WithTicker) *failureReport {
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: events.Events("")})
	return &failureReport{
		client:    client,
		podGroups: podGroups,
		recorder:  broadcaster.NewRecorder(scheme.Scheme, v1.EventSource{Component: schedulingv1beta1.SchedulerName}),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName](),
			workqueue.TypedRateLimitingQueueConfig[types.NamespacedName]{Name: "gang-failures", Clock: clk}),
		latest:  map[types.NamespacedName]string{},
		written: map[types.NamespacedName]string{},
	}
}

// record asks for the PodGroup's condition to say message; it never blocks.
func (r *failureReport) record(pg types.NamespacedName, message string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.written[pg] == message && r.latest[pg] == "" {
		return
	}
	r.latest[pg] = message
	r.queue.Add(pg)
}

// run writes reports until ctx ends.
func (r *failureReport) run(ctx context.Context) {
	go func() {
		<-ctx.Done()
		r.queue.ShutDown()
	}()
	for r.next(ctx) {
	}
}

func (r *failureReport) next(ctx context.Context) bool {
	key, quit := r.queue.Get()
	if quit {
		return false
	}
	defer r.queue.Done(key)
	r.mu.Lock()
	message := r.latest[key]
	delete(r.latest, key)
	r.mu.Unlock()
	if message == "" {
		return true
	}
	if err := r.write(ctx, key, message); err != nil {
		klog.FromContext(ctx).V(2).Info("Could not report an unschedulable gang", "podGroup", key, "err", err)
		if r.queue.NumRequeues(key) < maxReportRetries {
			r.mu.Lock()
			if r.latest[key] == "" {
				r.latest[key] = message
			}
			r.mu.Unlock()
			r.queue.AddRateLimited(key)
			return true
		}
	}
	r.queue.Forget(key)
	return true
}

// write sets the Unschedulable condition from the cached PodGroup and records the event.
func (r *failureReport) write(ctx context.Context, key types.NamespacedName, message string) error {
	pg, err := r.podGroups.PodGroups(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	pg = pg.DeepCopy()
	changed := meta.SetStatusCondition(&pg.Status.Conditions, metav1.Condition{
		Type: schedulingv1beta1.PodGroupUnschedulable, Status: metav1.ConditionTrue,
		Reason: ReasonGangUnschedulable, Message: message, ObservedGeneration: pg.Generation,
	})
	if changed {
		_, err = r.client.SchedulingV1beta1().PodGroups(key.Namespace).UpdateStatus(ctx, pg, metav1.UpdateOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
	}
	r.recorder.Event(pg, v1.EventTypeWarning, ReasonGangUnschedulable, message)
	r.mu.Lock()
	r.written[key] = message
	r.mu.Unlock()
	return nil
}

// forget drops what is known of a deleted PodGroup.
func (r *failureReport) forget(key types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.written, key)
	delete(r.latest, key)
}
