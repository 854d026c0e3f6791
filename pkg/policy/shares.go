package policy

import (
	"math"

	v1 "k8s.io/api/core/v1"
	quota "k8s.io/apiserver/pkg/quota/v1"
)

// UnderShare says whether queue, taking req more, stays within its deserved share in every resource
// req asks for: only then may it take resources back from other queues.
func UnderShare(s *Snapshot, queue string, req v1.ResourceList) bool {
	q := s.Queue(queue)
	if q == nil {
		return overShare(nil, nil, req, true) == ""
	}
	return overShare(q.Allocated, q.Deserved, req, true) == ""
}

// ReclaimableSpare returns, for every reclaimable queue but except that holds more than its deserved
// share, how much more: what reclaim may take from it without taking it below its share. It is
// exact while the snapshot is not stale; on a stale one it never names a queue that is not
// reclaimable now or holds nothing now, whatever the shares, computed before, said.
func ReclaimableSpare(s *Snapshot, except string) map[string]v1.ResourceList {
	out := make(map[string]v1.ResourceList, len(s.Spare))
	for name, spare := range s.Spare {
		if q := s.Queue(name); name != except && q != nil && q.Reclaimable && !quota.IsZero(q.Allocated) {
			out[name] = spare
		}
	}
	return out
}

// NothingToReclaimBeside says whether no queue but except holds anything reclaim could take back,
// on any shares: every other queue that holds something is not reclaimable. A plan for a pod of
// except then reads no share (preemption within its queue reads none), and is the same on a stale
// snapshot as on a fresh one.
func NothingToReclaimBeside(s *Snapshot, except string) bool {
	for name := range s.Queues {
		if q := s.Queue(name); name != except && q.Reclaimable && !quota.IsZero(q.Allocated) {
			return false
		}
	}
	return true
}

// Claimable is what the queues below their share can still claim: per leaf queue, what it deserves
// up to its demand, less what it holds (Claim).
func Claimable(deserved, demands, allocated map[string]v1.ResourceList, leaves []string) v1.ResourceList {
	total := v1.ResourceList{}
	for _, name := range leaves {
		addClaim(total, deserved[name], demands[name], allocated[name])
	}
	return total
}

// Claim is one leaf queue's part of Claimable: what it deserves up to its demand, less what it
// holds, where that is more than nothing.
func Claim(deserved, demand, held v1.ResourceList) v1.ResourceList {
	out := v1.ResourceList{}
	addClaim(out, deserved, demand, held)
	return out
}

// addClaim adds a leaf queue's claim to total.
func addClaim(total, deserved, demand, held v1.ResourceList) {
	for r, d := range deserved {
		want := d.DeepCopy()
		if dm, ok := demand[r]; !ok || dm.Cmp(want) < 0 {
			want = dm.DeepCopy()
		}
		want.Sub(held[r])
		if want.Sign() > 0 {
			acc := total[r]
			acc.Add(want)
			total[r] = acc
		}
	}
}

// ReservedClaims is the part of the queues' claims on idle room that reservations starting later
// keep for them on the nodes, by queue's reserved room: for each queue, what its reservations hold,
// up to what the queue can still claim (its deserved share, or its demand when less, less what it
// holds). The reservations' guards keep that room free for the gangs, so that part of the claim
// need not bar other work now; the rest of a queue's claim, and other queues' claims, still do.
func ReservedClaims(s *Snapshot, reserved map[string]v1.ResourceList) v1.ResourceList {
	out := v1.ResourceList{}
	for queue, held := range reserved {
		q := s.Queue(queue)
		if q == nil {
			continue
		}
		for name, h := range held {
			claim := q.Deserved[name].DeepCopy()
			if demand := quota.Add(q.Allocated, q.Pending)[name]; demand.Cmp(claim) < 0 {
				claim = demand
			}
			claim.Sub(q.Allocated[name])
			if h.Cmp(claim) < 0 {
				claim = h.DeepCopy()
			}
			if claim.Sign() > 0 {
				acc := out[name]
				acc.Add(claim)
				out[name] = acc
			}
		}
	}
	return out
}

// AboveShare is what a queue holding held, of which leaving is on its way out, holds above deserved
// in each resource; nil, and nothing allocated, when it holds nothing above it: the shares of every
// queue are checked at every computation, and most are not above.
func AboveShare(held, leaving, deserved v1.ResourceList) v1.ResourceList {
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

// DominantShare is how much of its deserved share a queue holds, in the resource where it holds the
// most: 0 for a queue that holds nothing, above 1 for one that borrows, +Inf for one that holds what
// it does not deserve at all. Queues with the lowest dominant share are served first.
func DominantShare(allocated, deserved v1.ResourceList) float64 {
	share := 0.0
	for name, al := range allocated {
		if al.IsZero() {
			continue
		}
		d := deserved[name]
		if d.IsZero() {
			return math.Inf(1)
		}
		share = max(share, al.AsApproximateFloat64()/d.AsApproximateFloat64())
	}
	return share
}

// RememberedShare is how much a queue used, as its usage history remembers it (resource-seconds by
// resource), in the resource it used the most of relative to what the cluster has, over its weight:
// among queues that are otherwise equal, reclaim takes first from the one with the largest. 0 for a
// queue that used nothing or without a history.
func RememberedShare(used map[v1.ResourceName]float64, capacity v1.ResourceList, weight int32) float64 {
	share := 0.0
	for name, u := range used {
		c, ok := capacity[name]
		if !ok || c.Sign() <= 0 || !(u > 0) {
			continue
		}
		share = max(share, u/c.AsApproximateFloat64())
	}
	return share / float64(max(weight, 1))
}
