package accounting

import (
	v1 "k8s.io/api/core/v1"
	quota "k8s.io/apiserver/pkg/quota/v1"
)

// UnderShare says whether queue, taking req more, stays within its deserved share in every resource
// req asks for: only then may it take resources back from other queues.
func (a *Accounting) UnderShare(queue string, req v1.ResourceList) bool {
	return overShare(a.Usage(queue).Allocated, a.Deserved(queue), req, true) == ""
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
		staying := quota.SubtractWithNonNegativeResult(u.Allocated, u.Terminating)
		spare := quota.RemoveZeros(quota.SubtractWithNonNegativeResult(staying, deserved[name]))
		if len(spare) > 0 {
			out[name] = spare
		}
	}
	return out
}
