package accounting

import (
	v1 "k8s.io/api/core/v1"

	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
)

// UnderShare says whether queue, taking req more, stays within its deserved share now
// (policy.UnderShare).
func (a *Accounting) UnderShare(queue string, req v1.ResourceList) bool {
	return policy.UnderShare(a.Snapshot(), queue, req)
}

// ReclaimableSpare returns, for every reclaimable queue but except that holds more than its deserved
// share, how much more, by its usage now against the shares last computed (policy.ReclaimableSpare).
func (a *Accounting) ReclaimableSpare(except string) map[string]v1.ResourceList {
	return policy.ReclaimableSpare(a.Snapshot(), except)
}
