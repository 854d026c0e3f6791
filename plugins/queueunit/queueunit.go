// Package queueunit is the scheduler plugin that holds the pods of a job queued by a QueueUnit until
// the unit is Dequeued, and lets them in the moment it is.
package queueunit

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/holdreport"
)

// Name is the plugin's name in the scheduler configuration.
const Name = "QueueUnit"

// QueueUnit holds back the pods of jobs whose QueueUnit waits in its queue.
type QueueUnit struct {
	acct *accounting.Accounting
	*holdreport.Holder
}

var (
	_ fwk.PreEnqueuePlugin  = &QueueUnit{}
	_ fwk.EnqueueExtensions = &QueueUnit{}
)

// New builds the plugin on the process's shared accounting and starts its held-pod reporter.
func New(ctx context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	acct, err := accounting.ForHandle(ctx, h)
	if err != nil {
		return nil, err
	}
	holder, err := holdreport.NewHolder(ctx, h)
	if err != nil {
		return nil, err
	}
	p := &QueueUnit{acct: acct, Holder: holder}
	_, err = acct.Informers.Scheduling().V1beta1().QueueUnits().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) { p.onUnit(obj) },
		DeleteFunc: func(obj any) { p.onUnit(obj) },
	})
	return p, err
}

// Name returns the plugin's name.
func (p *QueueUnit) Name() string { return Name }

// PreEnqueue lets a pod into the active queue unless the QueueUnit of its job is still Enqueued.
func (p *QueueUnit) PreEnqueue(ctx context.Context, pod *v1.Pod) *fwk.Status {
	u := p.acct.UnitOf(pod)
	if u == nil || u.Dequeued() {
		p.Release(pod)
		return nil
	}
	message := holdMessage(u)
	p.Hold(pod, accounting.UnitKey(u), message)
	klog.FromContext(ctx).V(5).Info("Pod held by its QueueUnit", "pod", klog.KObj(pod), "queueUnit", klog.KObj(u))
	return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, message)
}

// holdMessage says why the pods of an Enqueued unit wait.
func holdMessage(u *schedulingv1beta1.QueueUnit) string {
	message := fmt.Sprintf("QueueUnit %s/%s is Enqueued: the job's pods wait until it is dequeued", u.Namespace, u.Name)
	if u.Status.Message != "" {
		message += " (" + u.Status.Message + ")"
	}
	return message
}

// onUnit lets held pods in when the accounting sees their unit Dequeued or deleted, whichever of
// the scheduler's informer (which drives the QueueingHints) and the accounting's sees it last.
func (p *QueueUnit) onUnit(obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	u, ok := obj.(*schedulingv1beta1.QueueUnit)
	if !ok {
		return
	}
	key := accounting.UnitKey(u)
	if u.Dequeued() || p.deleted(u) {
		p.Activate(key)
		return
	}
	p.Tell(key, holdMessage(u))
}

// deleted says whether the unit is gone from the accounting's cache.
func (p *QueueUnit) deleted(u *schedulingv1beta1.QueueUnit) bool {
	cur, err := p.acct.QueueUnits().QueueUnits(u.Namespace).Get(u.Name)
	return err != nil || cur.UID != u.UID
}
