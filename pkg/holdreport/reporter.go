// Package holdreport tells users why a pod waits before scheduling. kube-scheduler writes nothing to a
// pod that a PreEnqueue plugin holds back, so without this a held pod would look silently stuck.
//
// PreEnqueue only records the reason (a map write); a single worker, off the scheduling path, sets
// PodScheduled=False with the reason and emits a FailedScheduling event, at a bounded rate and once
// per change of reason, so that ten thousand held pods do not flood the API server.
package holdreport

import (
	"context"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
	"k8s.io/utils/clock"

	"github.com/queue-scheduler/queue-scheduler/pkg/metrics"
)

const (
	// FieldManager names the reporter's writes.
	FieldManager = "queue-scheduler"
	// ReportsPerSecond bounds the rate of all reports of one reporter (each plugin that holds pods
	// has one); each report is one status write and one event.
	ReportsPerSecond = 50
	// ReportBurst is how many reports may go out at once before ReportsPerSecond applies.
	ReportBurst = 100
	// ReportDelay is how long a pod must wait before its first report is written: a wait that ends on
	// its own within it (fresh shares a moment away, a gang's last member arriving) leaves no Warning.
	ReportDelay = time.Second
	// maxRetries is how often a failed report is tried again before it waits for the next change.
	maxRetries = 5
)

// Reporter reports held pods. It is safe for concurrent use.
type Reporter struct {
	client   kubernetes.Interface
	pods     corelisters.PodLister
	recorder events.EventRecorderLogger
	limiter  flowcontrol.RateLimiter
	delay    time.Duration
	queue    workqueue.TypedRateLimitingInterface[types.NamespacedName]

	mu       sync.Mutex
	pending  map[types.NamespacedName]hold
	reported map[types.UID]Why
}

// Why is the PodScheduled=False condition of a held pod: its reason and message. A pod that more
// nodes cannot help carries a reason of its own, so that cluster autoscalers, which add nodes for pods
// whose reason is Unschedulable, leave it alone; an empty reason reports as Unschedulable.
type Why struct {
	Reason  string
	Message string
}

// Reasons of held pods that no new node can help.
const (
	// QueueSuspended: the pod's queue is Suspended.
	QueueSuspended = "QueueSuspended"
	// QueueUnknown: the pod's queue has no known place in the tree (missing parent, cycle).
	QueueUnknown = "QueueUnknown"
	// QueueMissing: the pod's queue does not exist, or is the root.
	QueueMissing = "QueueMissing"
	// QueueCapability: the pod's queue, or one of its ancestors, would exceed its capability, and no
	// pod of the queue of lower priority could make room by preemption.
	QueueCapability = "QueueCapability"
	// ExceedsCapability: the pod's request alone exceeds the capability of its queue or of one of its
	// ancestors (lowered after the pod was admitted): it waits until the capability is raised.
	ExceedsCapability = "ExceedsCapability"
	// NamespaceNotAllowed: the pod's queue does not select its namespace.
	NamespaceNotAllowed = "NamespaceNotAllowed"
	// PodGroupMissing: the pod's PodGroup does not exist yet.
	PodGroupMissing = "PodGroupMissing"
	// PodGroupPending: the pod's PodGroup has not been admitted to its queue yet.
	PodGroupPending = "PodGroupPending"
	// GangIncomplete: the pod's gang has fewer than minMember pods, or is denied until its time-out.
	GangIncomplete = "GangIncomplete"
	// UnitEnqueued: the QueueUnit of the pod's job is still Enqueued.
	UnitEnqueued = "UnitEnqueued"
)

// hold is one pod's latest reason to wait.
type hold struct {
	pod *v1.Pod
	Why
}

// New returns a reporter whose delays run on clk; Run starts its worker.
func New(client kubernetes.Interface, pods corelisters.PodLister, recorder events.EventRecorderLogger, clk clock.WithTicker) *Reporter {
	return &Reporter{
		client:   client,
		pods:     pods,
		recorder: recorder,
		limiter:  flowcontrol.NewTokenBucketRateLimiter(ReportsPerSecond, ReportBurst),
		delay:    ReportDelay,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName](),
			workqueue.TypedRateLimitingQueueConfig[types.NamespacedName]{Name: "held-pod-reports", Clock: clk},
		),
		pending:  map[types.NamespacedName]hold{},
		reported: map[types.UID]Why{},
	}
}

// Held records why pod waits. It returns at once; the report is written later, and only if it
// differs from what was last reported for the pod.
func (r *Reporter) Held(pod *v1.Pod, w Why) {
	key := types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}
	if w.Reason == "" {
		w.Reason = v1.PodReasonUnschedulable
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reported[pod.UID] == w {
		delete(r.pending, key)
		return
	}
	r.pending[key] = hold{pod: pod, Why: w}
	if _, reported := r.reported[pod.UID]; reported {
		r.queue.Add(key) // a new reason for a pod that waits already
		return
	}
	r.queue.AddAfter(key, r.delay)
}

// Released forgets pod: it no longer waits, or is gone. If it is held again later, that is a change
// of reason and is reported again.
func (r *Reporter) Released(pod *v1.Pod) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.pending, types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name})
	delete(r.reported, pod.UID)
}

// Run writes reports until ctx ends.
func (r *Reporter) Run(ctx context.Context) {
	go func() {
		<-ctx.Done()
		r.queue.ShutDown()
	}()
	for r.processNext(ctx) {
	}
}

func (r *Reporter) processNext(ctx context.Context) bool {
	key, shutdown := r.queue.Get()
	if shutdown {
		return false
	}
	defer r.queue.Done(key)
	h, ok := r.take(key)
	if !ok {
		r.queue.Forget(key)
		return true
	}
	if err := r.limiter.Wait(ctx); err != nil {
		return false
	}
	if err := r.report(ctx, h); err != nil {
		r.retry(ctx, key, h, err)
		return true
	}
	r.queue.Forget(key)
	return true
}

// take removes the pending report of key, unless it says what was already reported.
func (r *Reporter) take(key types.NamespacedName) (hold, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	h, ok := r.pending[key]
	delete(r.pending, key)
	if !ok || r.reported[h.pod.UID] == h.Why {
		return hold{}, false
	}
	return h, true
}

func (r *Reporter) retry(ctx context.Context, key types.NamespacedName, h hold, err error) {
	logger := klog.FromContext(ctx)
	// A conflict means the cached pod was behind: the retry reads it again, and drops the report if
	// the pod was bound meanwhile.
	if apierrors.IsNotFound(err) || r.queue.NumRequeues(key) >= maxRetries {
		logger.V(4).Info("Dropping held-pod report", "pod", klog.KObj(h.pod), "err", err)
		r.queue.Forget(key)
		return
	}
	r.mu.Lock()
	if _, newer := r.pending[key]; !newer {
		r.pending[key] = h
	}
	r.mu.Unlock()
	r.queue.AddRateLimited(key)
}

// report sets PodScheduled=False and emits the FailedScheduling event. It writes against the pod's
// cached resourceVersion, so a pod bound meanwhile makes the write fail with a conflict instead of
// being marked unscheduled after the fact.
func (r *Reporter) report(ctx context.Context, h hold) error {
	pod, err := r.pods.Pods(h.pod.Namespace).Get(h.pod.Name)
	if err != nil {
		return err
	}
	if pod.UID != h.pod.UID || pod.Spec.NodeName != "" || pod.DeletionTimestamp != nil {
		return apierrors.NewNotFound(v1.Resource("pods"), pod.Name)
	}
	pod = pod.DeepCopy()
	podutil.UpdatePodCondition(&pod.Status, &v1.PodCondition{
		Type:    v1.PodScheduled,
		Status:  v1.ConditionFalse,
		Reason:  h.Reason,
		Message: h.Message,
	})
	if _, err := r.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{FieldManager: FieldManager}); err != nil {
		return err
	}
	klog.FromContext(ctx).V(5).Info("Reported a held pod", "pod", klog.KObj(pod), "reason", h.Reason)
	r.recorder.Eventf(pod, nil, v1.EventTypeWarning, "FailedScheduling", "Scheduling", h.Message)
	metrics.HeldPodReports.WithLabelValues(h.Reason).Inc()
	r.mu.Lock()
	r.reported[pod.UID] = h.Why
	r.mu.Unlock()
	return nil
}
