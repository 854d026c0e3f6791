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

// New builds the plugin on the scheduler's accounting, which the composition root (pkg/scheduler)
// hands it, and starts its held-pod reporter.
func New(ctx context.Context, _ runtime.Object, h fwk.Handle, acct *accounting.Accounting) (fwk.Plugin, error) {
	holder, err := holdreport.NewHolder(ctx, h, acct.Clock())
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

// PreEnqueue lets a pod into the active queue unless the QueueUnit of its job is still Enqueued. The
// pod is indexed under its unit before the unit's phase is read, so that a unit dequeued after the
// check finds the pod.
func (p *QueueUnit) PreEnqueue(ctx context.Context, pod *v1.Pod) *fwk.Status {
	u := p.acct.Store.UnitOf(pod)
	if u == nil {
		p.Release(pod)
		return nil
	}
	p.Held.Add(pod, accounting.UnitKey(u))
	if u = p.current(u); u == nil || u.Dequeued() {
		p.Release(pod)
		return nil
	}
	why := holdWhy(u)
	p.Reporter.Held(pod, why)
	klog.FromContext(ctx).V(5).Info("Pod held by its QueueUnit", "pod", klog.KObj(pod), "queueUnit", klog.KObj(u))
	return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, why.Message)
}

// holdWhy says why the pods of an Enqueued unit wait.
func holdWhy(u *schedulingv1beta1.QueueUnit) holdreport.Why {
	message := fmt.Sprintf("QueueUnit %s/%s is Enqueued: the job's pods wait until it is dequeued", u.Namespace, u.Name)
	if u.Status.Message != "" {
		message += " (" + u.Status.Message + ")"
	}
	return holdreport.Why{Reason: holdreport.UnitEnqueued, Message: message}
}

// onUnit lets held pods in when their unit is Dequeued or deleted, or tells them its new message.
func (p *QueueUnit) onUnit(obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	u, ok := obj.(*schedulingv1beta1.QueueUnit)
	if !ok {
		return
	}
	key := accounting.UnitKey(u)
	if u.Dequeued() || p.current(u) == nil {
		p.Activate(key)
		return
	}
	p.Tell(key, holdWhy(u))
}

// current returns the unit as the accounting's cache holds it now, or nil when it is gone.
func (p *QueueUnit) current(u *schedulingv1beta1.QueueUnit) *schedulingv1beta1.QueueUnit {
	cur, err := p.acct.Store.QueueUnits().QueueUnits(u.Namespace).Get(u.Name)
	if err != nil || cur.UID != u.UID {
		return nil
	}
	return cur
}
