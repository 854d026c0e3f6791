package holdreport

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/utils/clock"

	"github.com/queue-scheduler/queue-scheduler/pkg/podindex"
)

// Holder is what a PreEnqueue plugin that holds pods back needs: the held pods indexed by what they
// wait for, the reporter that tells each pod why, and a way to let the pods of one wait key in.
type Holder struct {
	// Held indexes the held pods by wait key.
	Held *podindex.Index
	// Reporter writes why each held pod waits.
	Reporter *Reporter
	// Activator lets pods into the active queue: the scheduler framework's Activate.
	Activator func(logger klog.Logger, pods map[string]*v1.Pod)
}

// NewHolder builds the holder of a plugin on the scheduler handle, whose reports' delays run on clk,
// starts its reporter until ctx ends, and forgets pods once they are bound or gone.
func NewHolder(ctx context.Context, h fwk.Handle, clk clock.WithTicker) (*Holder, error) {
	pods := h.SharedInformerFactory().Core().V1().Pods()
	x := &Holder{
		Held:      podindex.New(),
		Reporter:  New(h.ClientSet(), pods.Lister(), h.EventRecorder(), clk),
		Activator: h.Activate,
	}
	if err := OnPodDone(pods.Informer(), x.Release); err != nil {
		return nil, err
	}
	go x.Reporter.Run(ctx)
	return x, nil
}

// OnPodDone calls done with each pod the informer sees bound to a node or deleted: a pod that no
// longer waits to be scheduled.
func OnPodDone(informer cache.SharedIndexInformer, done func(*v1.Pod)) error {
	_, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) {
			if pod, ok := obj.(*v1.Pod); ok && pod.Spec.NodeName != "" {
				done(pod)
			}
		},
		DeleteFunc: func(obj any) {
			if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tombstone.Obj
			}
			if pod, ok := obj.(*v1.Pod); ok {
				done(pod)
			}
		},
	})
	return err
}

// Release forgets pod: it no longer waits, is bound, or is gone.
func (x *Holder) Release(pod *v1.Pod) {
	x.Held.Remove(pod)
	x.Reporter.Released(pod)
}

// Activate lets the pods held for key into the active queue.
func (x *Holder) Activate(key string) {
	if pods := x.Held.Pods(key); len(pods) > 0 && x.Activator != nil {
		x.Activator(klog.Background(), pods)
	}
}

// Tell gives the pods held for key a new reason to wait.
func (x *Holder) Tell(key string, w Why) {
	for _, pod := range x.Held.Pods(key) {
		x.Reporter.Held(pod, w)
	}
}
