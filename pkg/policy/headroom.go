package policy

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Amounts are resource quantities as integers, so that a check on a hot path compares integers:
// milli-cpu, and whole units of every other resource (bytes, pods, devices). An amount saturates at
// ±amountLimit: Quantity.MilliValue overflows int64 above about 9.2 P units (8E reads 0), and a
// capability of 8E cpu, or 10Pi of memory, must compare as very large, not as nothing.
type Amounts map[v1.ResourceName]int64

// amountLimit bounds an amount far below int64's range, so that sums of a few stay exact.
const amountLimit = 1 << 61

// amountOf converts one quantity of resource name.
func amountOf(name v1.ResourceName, q resource.Quantity) int64 {
	f := q.AsApproximateFloat64()
	if name == v1.ResourceCPU {
		f *= 1000
	}
	switch {
	case f >= amountLimit:
		return amountLimit
	case f <= -amountLimit:
		return -amountLimit
	case name == v1.ResourceCPU:
		return q.MilliValue()
	}
	return q.Value()
}

// AmountsOf converts a resource list.
func AmountsOf(list v1.ResourceList) Amounts {
	out := make(Amounts, len(list))
	for name, q := range list {
		out[name] = amountOf(name, q)
	}
	return out
}

// Add adds list times sign.
func (m Amounts) Add(list v1.ResourceList, sign int64) {
	for name, q := range list {
		m[name] = max(-amountLimit, min(amountLimit, m[name]+sign*amountOf(name, q)))
	}
}

// Headroom is what a refused pod's queue would have to free, of its own pods, for the pod to pass:
// computed once per scheduling cycle, so that each node and victim step of a preemption dry run
// compares a few integers.
type Headroom struct {
	// capability: per resource, the least that must be freed for the queue and its ancestors to stay
	// within their capabilities.
	capability Amounts
	// share: per resource, the queue's excess over its deserved share; more than it must be freed.
	share Amounts
	// borrows: the pod fits in idle room nobody below their share can claim: the share is no bar.
	borrows bool
	// shareless: the queue deserves nothing of a resource the pod asks for: no freeing helps.
	shareless bool
}

// HeadroomOf computes the headroom of a pod of queue that requests req, with reserved kept by the
// queue's admitted work but the pod's own, and for an ancestor what the admitted work of the other
// queues below it keeps (below, as Work.ReservedBelow; nil for none): the check Admit makes, as a
// function of what the queue frees.
func HeadroomOf(s *Snapshot, queue string, reserved, req v1.ResourceList, below func(string) v1.ResourceList) Headroom {
	h := Headroom{capability: Amounts{}, share: Amounts{}}
	q := s.Queue(queue)
	if q == nil {
		return h
	}
	s.Ancestry(queue, func(cur *Queue) {
		used := AmountsOf(cur.Subtree)
		used.Add(heldAt(cur, queue, reserved, below), 1)
		for r, limit := range cur.Capability {
			if want, asked := req[r]; asked && !want.IsZero() {
				h.capability[r] = max(h.capability[r], used[r]+amountOf(r, want)-amountOf(r, limit))
			}
		}
	})
	for r, want := range req {
		if want.IsZero() {
			continue
		}
		d, ok := q.Deserved[r]
		if !ok {
			h.shareless = true
			continue
		}
		h.share[r] = amountOf(r, q.Allocated[r]) - amountOf(r, d)
	}
	h.borrows = Borrowable(s, req, nil)
	return h
}

// Fits says whether the pod passes once the queue frees freed.
func (h Headroom) Fits(freed Amounts) bool {
	for r, need := range h.capability {
		if max(freed[r], 0) < need {
			return false
		}
	}
	if h.borrows {
		return true
	}
	if h.shareless {
		return false
	}
	for r, over := range h.share {
		if max(freed[r], 0) <= over {
			return false
		}
	}
	return true
}
