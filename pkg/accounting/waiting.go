package accounting

import (
	v1 "k8s.io/api/core/v1"
)

// WaitingPod is a live pod counted against a queue that does not hold its requests yet.
type WaitingPod struct {
	Pod *v1.Pod
	// Requests is what the accounting counts it as asking for; read, never changed.
	Requests v1.ResourceList
}

// WaitingPods returns, by queue, the live pods the accounting counts and does not count as holding:
// not bound, and not assumed at Reserve. It reads every pod of the informer: a view's request, not
// a scheduling cycle's.
func (a *Accounting) WaitingPods() map[string][]WaitingPod {
	if a.pods == nil {
		return nil
	}
	objs := a.pods.List()
	a.usage.mu.RLock()
	defer a.usage.mu.RUnlock()
	out := map[string][]WaitingPod{}
	for _, obj := range objs {
		pod, ok := obj.(*v1.Pod)
		if !ok {
			continue
		}
		if p, counted := a.usage.pods[pod.UID]; counted && !p.holds() {
			out[p.queue] = append(out[p.queue], WaitingPod{Pod: pod, Requests: p.requests})
		}
	}
	return out
}
