package accounting

import (
	v1 "k8s.io/api/core/v1"
)

// UnderShare says whether queue, taking req more, stays within its deserved share in every resource
// req asks for: only then may it take resources back from other queues.
func (a *Accounting) UnderShare(queue string, req v1.ResourceList) bool {
	return overShare(a.allocatedTo(queue), a.deservedOf(queue), req, true) == ""
}

// ReclaimableSpare returns, for every reclaimable queue but except that holds more than its deserved
// share, how much more: what reclaim may take from it without taking it below its share. It is
// computed with the shares, off the scheduling path, and exact while they are not stale.
func (a *Accounting) ReclaimableSpare(except string) map[string]v1.ResourceList {
	a.shares.mu.RLock()
	defer a.shares.mu.RUnlock()
	out := make(map[string]v1.ResourceList, len(a.shares.spare))
	for name, spare := range a.shares.spare {
		if name != except {
			out[name] = spare
		}
	}
	return out
}

// spareOf computes, for the reclaimable leaves above their share, what they hold above it, not
// counting what their terminating pods hold: that is given back already.
func (a *Accounting) spareOf(deserved map[string]v1.ResourceList, leaves []string, usage map[string]QueueUsage) map[string]v1.ResourceList {
	out := map[string]v1.ResourceList{}
	for _, name := range leaves {
		q, ok := a.Queue(name)
		if !ok || (q.Spec.Reclaimable != nil && !*q.Spec.Reclaimable) {
			continue
		}
		u := usage[name]
		if spare := aboveShare(u.Allocated, u.Terminating, deserved[name]); spare != nil {
			out[name] = spare
		}
	}
	return out
}

// aboveShare is what a queue holding held, of which leaving is on its way out, holds above
// deserved in each resource; nil, and nothing allocated, when it holds nothing above it: the
// shares of every queue are checked at every computation, and most are not above.
func aboveShare(held, leaving, deserved v1.ResourceList) v1.ResourceList {
	var out v1.ResourceList
	for name, h := range held {
		staying := h.DeepCopy()
		if l, ok := leaving[name]; ok {
			staying.Sub(l)
		}
		if d, ok := deserved[name]; ok {
			staying.Sub(d)
		}
		if staying.Sign() <= 0 {
			continue
		}
		if out == nil {
			out = v1.ResourceList{}
		}
		out[name] = staying
	}
	return out
}
