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
// share, how much more: what reclaim may take from it without taking it below its share.
func (a *Accounting) ReclaimableSpare(except string) map[string]v1.ResourceList {
	out := map[string]v1.ResourceList{}
	for _, q := range a.AllQueues() {
		if q.Name == except || (q.Spec.Reclaimable != nil && !*q.Spec.Reclaimable) || len(a.Children(q.Name)) > 0 {
			continue
		}
		allocated := a.Usage(q.Name).Allocated
		if len(allocated) == 0 {
			continue
		}
		spare := quota.RemoveZeros(quota.SubtractWithNonNegativeResult(allocated, a.Deserved(q.Name)))
		if len(spare) > 0 {
			out[q.Name] = spare
		}
	}
	return out
}
