// Package queuestate is the scheduler plugin that enforces queue states: the pods of a Suspended or
// Unknown queue, of a missing queue, or of a PodGroup that does not exist yet wait outside the active
// queue, each with a report saying why, and come back the moment that changes.
package queuestate

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/queue-scheduler/queue-scheduler/apis/config"
	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/embedded"
	"github.com/queue-scheduler/queue-scheduler/pkg/holdreport"
)

// Name is the plugin's name in the scheduler configuration.
const Name = "QueueState"

// What a held pod waits for, as keys of the held-pod index: a change to that thing finds its pods.
const namespacesBucket = "namespaces"

func queueBucket(queue string) string { return "queue/" + queue }

func podGroupBucket(namespace, name string) string {
	return "podgroup/" + namespace + "/" + name
}

// QueueState holds back the pods of queues that must not get new resources.
type QueueState struct {
	acct *accounting.Accounting
	*holdreport.Holder
	// reason is holdReason; a test puts a changing world in its place.
	reason func(*v1.Pod) (string, string)
}

var (
	_ fwk.PreEnqueuePlugin  = &QueueState{}
	_ fwk.EnqueueExtensions = &QueueState{}
)

// New builds the plugin on the process's shared accounting, starts its held-pod reporter, and starts
// the embedded webhook server and controller once per process.
func New(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	args, err := config.Decode(obj, embedded.DefaultNamespace())
	if err != nil {
		return nil, err
	}
	acct, err := accounting.ForHandle(ctx, h)
	if err != nil {
		return nil, err
	}
	if err := embedded.Start(ctx, h, acct, args); err != nil {
		return nil, err
	}
	holder, err := holdreport.NewHolder(ctx, h)
	if err != nil {
		return nil, err
	}
	p := &QueueState{acct: acct, Holder: holder}
	p.reason = p.holdReason
	if err := p.watch(); err != nil {
		return nil, err
	}
	go p.activateWhenNamespacesSynced(ctx)
	return p, nil
}

// Name returns the plugin's name.
func (p *QueueState) Name() string { return Name }

// PreEnqueue lets a pod into the active queue unless its queue holds it; a held pod gets a report
// saying why, written asynchronously.
func (p *QueueState) PreEnqueue(ctx context.Context, pod *v1.Pod) *fwk.Status {
	message := p.holdUntilSettled(pod)
	if message == "" {
		p.Release(pod)
		return nil
	}
	klog.FromContext(ctx).V(5).Info("Pod held by its queue", "pod", klog.KObj(pod), "reason", message)
	return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, message)
}

// holdUntilSettled holds the pod for what it waits for, and checks again once it is held: the change
// that lets it in (a PodGroup or queue reaching the accounting's cache, whose handlers activate the
// pods held for it) may have come between the first check and the hold, and would have found no pod
// to activate. It returns why the pod stays held, or "" when it may go on.
func (p *QueueState) holdUntilSettled(pod *v1.Pod) string {
	b, message := p.reason(pod)
	for range 3 {
		if message == "" {
			return ""
		}
		p.Hold(pod, b, message)
		again, why := p.reason(pod)
		if again == b && why != "" {
			if why != message {
				p.Hold(pod, b, why)
			}
			return why
		}
		b, message = again, why
	}
	if message != "" {
		p.Hold(pod, b, message)
	}
	return message
}

// holdReason says what a pod waits for and why, or returns an empty message when it may be scheduled.
func (p *QueueState) holdReason(pod *v1.Pod) (string, string) {
	if !p.acct.NamespacesSynced() {
		return namespacesBucket, "waiting for the scheduler's namespace cache to learn the pod's queue"
	}
	name, err := p.acct.QueueOf(pod)
	if err != nil {
		return podGroupBucket(pod.Namespace, pod.Labels[schedulingv1beta1.PodGroupLabel]), err.Error()
	}
	q, _ := p.acct.Queue(name)
	return queueBucket(name), p.holdMessage(name, q)
}

// holdMessage says why the pods of queue name (nil when missing) are held, or "" when they are not.
func (p *QueueState) holdMessage(name string, q *schedulingv1beta1.Queue) string {
	switch {
	case name == schedulingv1beta1.RootQueue:
		return fmt.Sprintf("queue %q is the root of the queue hierarchy: it takes no work", name)
	case q == nil:
		return fmt.Sprintf("queue %q does not exist", name)
	case q.Spec.Parent != "" && q.SchedulingState() != schedulingv1beta1.QueueStateSuspended:
		if _, ok := p.acct.Queue(q.Spec.Parent); !ok {
			return fmt.Sprintf("queue %q is Unknown: its parent queue %q does not exist", name, q.Spec.Parent)
		}
	}
	switch q.SchedulingState() {
	case schedulingv1beta1.QueueStateSuspended:
		return fmt.Sprintf("queue %q is Suspended: no new resources are allocated", name)
	case schedulingv1beta1.QueueStateUnknown:
		return fmt.Sprintf("queue %q is Unknown: no new work is scheduled until its state is known", name)
	default:
		return ""
	}
}

// watch closes the race between the scheduler's own informer on queues (which drives the
// QueueingHints) and the accounting's: whichever sees a change last, the held pods are brought back
// once the accounting reflects it.
func (p *QueueState) watch() error {
	if _, err := p.acct.QueueInformer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { p.onQueue(obj) },
		UpdateFunc: func(_, obj any) { p.onQueue(obj) },
	}); err != nil {
		return err
	}
	_, err := p.acct.PodGroupInformer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: p.onPodGroupAdd,
	})
	return err
}

// onQueue lets in the pods a queue no longer holds, and tells those it still holds the new reason
// (a queue that now exists but is Suspended, say).
func (p *QueueState) onQueue(obj any) {
	q, ok := obj.(*schedulingv1beta1.Queue)
	if !ok {
		return
	}
	message := p.holdMessage(q.Name, q)
	if message == "" {
		p.Activate(queueBucket(q.Name))
		return
	}
	p.Tell(queueBucket(q.Name), message)
}

func (p *QueueState) onPodGroupAdd(obj any) {
	if pg, ok := obj.(*schedulingv1beta1.PodGroup); ok {
		p.Activate(podGroupBucket(pg.Namespace, pg.Name))
	}
}

// activateWhenNamespacesSynced brings back the pods held only because namespaces were not yet known.
func (p *QueueState) activateWhenNamespacesSynced(ctx context.Context) {
	if cache.WaitForCacheSync(ctx.Done(), p.acct.NamespacesSynced) {
		p.Activate(namespacesBucket)
	}
}
