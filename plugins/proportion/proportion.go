// Package proportion is the scheduler plugin that shares the cluster between queues: a pod is
// scheduled only while its queue (and every ancestor) stays within capability, and its queue is
// below its deserved fair share, or the pod only borrows what is idle and claimed by no queue below
// its share. Reserve and Unreserve keep the shared accounting ahead of the informers.
package proportion

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/podindex"
)

// Name is the plugin's name in the scheduler configuration.
const Name = "Proportion"

// staleBucket holds the pods turned away while the shares were being recomputed.
const staleBucket = "\x00stale-shares"

// Proportion enforces capabilities and fair shares.
type Proportion struct {
	handle   fwk.Handle
	acct     *accounting.Accounting
	rejected *podindex.Index
}

var (
	_ fwk.PreFilterPlugin   = &Proportion{}
	_ fwk.ReservePlugin     = &Proportion{}
	_ fwk.EnqueueExtensions = &Proportion{}
)

// New builds the plugin on the process's shared accounting.
func New(ctx context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	acct, err := accounting.ForHandle(ctx, h)
	if err != nil {
		return nil, err
	}
	p := &Proportion{handle: h, acct: acct, rejected: podindex.New()}
	// A larger share lets in the pods that waited for it; fresh shares, those that waited for them.
	acct.OnDeservedChange(p.activate)
	acct.OnSharesComputed(func() { p.activate(staleBucket) })
	if _, err := h.SharedInformerFactory().Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) { p.forgetIfBound(obj) },
		DeleteFunc: p.forget,
	}); err != nil {
		return nil, err
	}
	return p, nil
}

// Name returns the plugin's name.
func (p *Proportion) Name() string { return Name }

// PreFilter rejects a pod whose queue may not take more now; the message names the queue and the
// resource.
func (p *Proportion) PreFilter(ctx context.Context, _ fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	queue, err := p.acct.QueueOf(pod)
	if err != nil {
		return nil, nil // QueueState holds pods whose queue is unknown.
	}
	req := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	if refusal := p.acct.Admit(queue, req); refusal != nil {
		bucket := queue
		if refusal.WaitsForShares {
			bucket = staleBucket
		}
		p.rejected.Add(pod, bucket)
		klog.FromContext(ctx).V(5).Info("Queue share exhausted", "pod", klog.KObj(pod), "reason", refusal.Message)
		// Unresolvable by preemption: evicting pods of other queues by priority would undo their
		// shares. Taking resources back between queues is reclaim's job.
		return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, refusal.Message)
	}
	p.rejected.Remove(pod)
	return nil, nil
}

// PreFilterExtensions is nil: the share check does not depend on other pods on a node.
func (p *Proportion) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// Reserve counts the pod against its queue at once, so the next pods in this cycle see it.
func (p *Proportion) Reserve(_ context.Context, _ fwk.CycleState, pod *v1.Pod, nodeName string) *fwk.Status {
	p.acct.Assume(pod, nodeName)
	return nil
}

// Unreserve gives the pod's resources back when it was not bound.
func (p *Proportion) Unreserve(_ context.Context, _ fwk.CycleState, pod *v1.Pod, _ string) {
	p.acct.Forget(pod)
}

func (p *Proportion) forgetIfBound(obj any) {
	if pod, ok := obj.(*v1.Pod); ok && pod.Spec.NodeName != "" {
		p.rejected.Remove(pod)
	}
}

func (p *Proportion) forget(obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	if pod, ok := obj.(*v1.Pod); ok {
		p.rejected.Remove(pod)
	}
}

func (p *Proportion) activate(queue string) {
	if pods := p.rejected.Pods(queue); len(pods) > 0 {
		p.handle.Activate(klog.Background(), pods)
	}
}
