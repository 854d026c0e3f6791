package accounting

import (
	v1 "k8s.io/api/core/v1"

	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
)

// HeadroomOf computes, on snap, the headroom of a pod of queue, of the work own, that requests req:
// the check Admit makes, as a function of what the queue frees (policy.HeadroomOf).
func (a *Accounting) HeadroomOf(snap *policy.Snapshot, queue string, own WorkKey, req v1.ResourceList) policy.Headroom {
	w := a.heldBack(snap, queue, own)
	return policy.HeadroomOf(snap, queue, w.HeldBack, req, w.ReservedBelow)
}

// Holding returns the queue and the requests of a pod the accounting counts, read without
// resolving or recomputing anything.
func (a *Accounting) Holding(pod *v1.Pod) (string, v1.ResourceList, bool) {
	a.Pods.mu.RLock()
	defer a.Pods.mu.RUnlock()
	p, ok := a.Pods.pods[pod.UID]
	return p.queue, p.requests, ok
}
