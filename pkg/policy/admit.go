package policy

import (
	"fmt"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	quota "k8s.io/apiserver/pkg/quota/v1"
)

// Refusal says why a pod or a unit of work may not take room in its queue now.
type Refusal struct {
	// Message names the queue, the resource and the rule.
	Message string
	// AtCapability is set when the queue or an ancestor would exceed its capability: more nodes do
	// not help, only the queue's own pods leaving (or a larger capability) does.
	AtCapability bool
	// ExceedsCapability is set, with AtCapability, when the request alone exceeds the capability of
	// the queue or an ancestor: nothing leaving helps, only a larger capability does.
	ExceedsCapability bool
	// Behind is set when the queue would take the work but older work of the queue goes first: no
	// eviction is due for it.
	Behind bool
	// Suspended is set when the snapshot has the work's queue Suspended: the work came past its
	// queue's gate a moment before the queue was suspended, or while the snapshot was behind a change
	// of the queue.
	Suspended bool
	// Unseen is set when the snapshot does not hold the work's queue, which its informer's store
	// holds: the queue was created a moment ago, and the snapshot takes it in at the next change.
	Unseen bool
}

// SuspendedMessage says why the work of a suspended queue waits.
func SuspendedMessage(queue string) string {
	return fmt.Sprintf("queue %q is Suspended: no new resources are allocated", queue)
}

// BehindLetIn refuses a pod of queue that older pods of the queue, let in for the room that freed,
// must go before: they take it, and the pod waits for its own turn.
func BehindLetIn(queue string) *Refusal {
	return &Refusal{Behind: true, Message: fmt.Sprintf(
		"older pods of queue %q were let in for the room that freed, and go first", queue)}
}

func refuse(format string, args ...any) *Refusal {
	return &Refusal{Message: fmt.Sprintf(format, args...)}
}

func atCapability(format string, args ...any) *Refusal {
	return &Refusal{Message: fmt.Sprintf(format, args...), AtCapability: true}
}

// Work is what is asked of a queue, besides the requests, and how to judge it.
type Work struct {
	// Reserved is added to the queue's allocation: what its other admitted units keep.
	Reserved v1.ResourceList
	// Whole requires allocation + request within the deserved share, not only allocation below it:
	// a unit of work is admitted whole.
	Whole bool
	// HeldBack is added to the queue's allocation for the capability checks only: what its admitted
	// PodGroups, but the work's own, keep beyond what their members hold.
	HeldBack v1.ResourceList
	// ReservedBelow, when set, says what the admitted work of the queues below an ancestor of the
	// queue, the queue itself aside, reserves (as Reserved and HeldBack do for the queue): it is
	// added to that ancestor's allocation for its capability check. Called only for ancestors with
	// a capability.
	ReservedBelow func(ancestor string) v1.ResourceList
	// Backfill is room the queues below their share claim for gangs whose reservations start later
	// (ReservedClaims): the reservations keep it free on the nodes for them, so the claim does not
	// bar the work now.
	Backfill v1.ResourceList
}

// Admit says why work of queue that requests req may not take room now, or nil when it may. A queue
// and each of its ancestors must stay within capability; and the queue must be below its deserved
// share in every resource requested (with Whole, allocation + request within it), unless the work
// fits in what is idle and claimed by no queue below its share (borrowing, so that queues that each
// want more than their share do not leave the cluster idle). A queue the snapshot does not know is
// no bar: QueueState holds the pods of unknown queues.
func Admit(s *Snapshot, queue string, req v1.ResourceList, w Work) *Refusal {
	q := s.Queue(queue)
	if q == nil {
		return nil
	}
	if q.Suspended {
		// Work that passed its queue's hold a moment before the queue was suspended.
		return &Refusal{Message: SuspendedMessage(queue), Suspended: true}
	}
	if r := withinCapability(s, queue, req, quota.Add(w.Reserved, w.HeldBack), w.ReservedBelow); r != nil {
		return r
	}
	allocated := quota.Add(q.Allocated, w.Reserved)
	over := overShare(allocated, q.Deserved, req, w.Whole)
	if over == "" {
		return nil
	}
	if Borrowable(s, quota.Add(req, w.Reserved), w.Backfill) {
		return nil
	}
	d, al, r := q.Deserved[over], allocated[over], req[over]
	return refuse("queue %q is at its deserved share of %s (%s allocated, %s deserved, %s requested) and no idle %s is left to borrow",
		queue, over, al.String(), d.String(), r.String(), over)
}

// Borrowable says whether req fits in what is idle once the queues below their share have what they
// can still claim, less backfill: claims that reservations keep on the nodes for later.
func Borrowable(s *Snapshot, req, backfill v1.ResourceList) bool {
	claimed := s.Claimable
	if len(backfill) > 0 {
		claimed = quota.SubtractWithNonNegativeResult(claimed, backfill)
	}
	return fitsBeside(req, s.SharedCapacity, s.Allocated, claimed)
}

// fitsBeside says whether req fits in capacity once what is taken is set aside, in every resource
// it requests.
func fitsBeside(req, capacity v1.ResourceList, taken ...v1.ResourceList) bool {
	for name, r := range req {
		if r.IsZero() {
			continue
		}
		free := capacity[name].DeepCopy()
		for _, t := range taken {
			free.Sub(t[name])
		}
		if free.Cmp(r) < 0 {
			return false
		}
	}
	return true
}

// withinCapability checks the queue and its ancestors against their capabilities, with what the
// queue's admitted work reserves added to what they hold, and for an ancestor what the admitted work
// of the other queues below it reserves (below, when set). A request that exceeds a capability on
// its own is named first, wherever it stands in the ancestry: it is the one that no wait can end.
func withinCapability(s *Snapshot, queue string, req, reserved v1.ResourceList, below func(string) v1.ResourceList) *Refusal {
	refusal := NeverFitsIn(s, queue, req)
	s.Ancestry(queue, func(q *Queue) {
		if refusal != nil || len(q.Capability) == 0 {
			return
		}
		refusal = exceeds(q, heldAt(q, queue, reserved, below), req)
	})
	return refusal
}

// CappedAbove says whether an ancestor of queue, the queue aside, has a capability: only then does
// what the other queues below it reserve (Work.ReservedBelow) bear on work of queue.
func CappedAbove(s *Snapshot, queue string) bool {
	capped := false
	s.Ancestry(queue, func(q *Queue) {
		capped = capped || (q.Name != queue && len(q.Capability) > 0)
	})
	return capped
}

// heldAt is what admitted work keeps beyond what its pods hold, as a capability of q (queue or one of
// its ancestors) counts it: what queue's work reserves, and for an ancestor what the work of the
// other queues below it reserves.
func heldAt(q *Queue, queue string, reserved v1.ResourceList, below func(string) v1.ResourceList) v1.ResourceList {
	if below == nil || q.Name == queue || len(q.Capability) == 0 {
		return reserved
	}
	return quota.Add(reserved, below(q.Name))
}

// NeverFitsIn says which capability of queue or of an ancestor req exceeds on its own, the nearest
// first, or nil.
func NeverFitsIn(s *Snapshot, queue string, req v1.ResourceList) *Refusal {
	var refusal *Refusal
	s.Ancestry(queue, func(q *Queue) {
		if refusal == nil {
			refusal = NeverFits(q.Name, q.Capability, req)
		}
	})
	return refusal
}

// Capped names, in order, the resources that queue or an ancestor has a capability of.
func Capped(s *Snapshot, queue string) []v1.ResourceName {
	var names []v1.ResourceName
	s.Ancestry(queue, func(q *Queue) {
		for name := range q.Capability {
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	})
	slices.Sort(names)
	return names
}

// NeverFits says which capability of queue req exceeds on its own, or nil: work that asks for more
// than its queue may ever hold waits until the capability is raised, whatever leaves the queue.
func NeverFits(queue string, capability, req v1.ResourceList) *Refusal {
	over := Exceeding(capability, req)
	if len(over) == 0 {
		return nil
	}
	return &Refusal{AtCapability: true, ExceedsCapability: true, Message: ExceedsMessage(queue, over[0], req[over[0]], capability[over[0]])}
}

// Exceeding names, in order, the resources whose request in req exceeds its capability.
func Exceeding(capability, req v1.ResourceList) []v1.ResourceName {
	var over []v1.ResourceName
	for _, name := range slices.Sorted(maps.Keys(capability)) {
		if r, asked := req[name]; asked && r.Cmp(capability[name]) > 0 {
			over = append(over, name)
		}
	}
	return over
}

// ExceedsMessage says that a request of name exceeds queue's capability of it, with the numbers.
func ExceedsMessage(queue string, name v1.ResourceName, req, limit resource.Quantity) string {
	return fmt.Sprintf("the request exceeds the capability of queue %q: %s %s requested > %s; it cannot run until the capability is raised",
		queue, name, req.String(), limit.String())
}

// exceeds says which capability of q what its subtree holds + reserved + req would exceed, or nil.
func exceeds(q *Queue, reserved, req v1.ResourceList) *Refusal {
	for name, limit := range q.Capability {
		r, asked := req[name]
		if !asked || r.IsZero() {
			continue
		}
		u, held := q.Subtree[name], reserved[name]
		total := u.DeepCopy()
		total.Add(held)
		total.Add(r)
		if total.Cmp(limit) <= 0 {
			continue
		}
		if held.IsZero() {
			return atCapability("queue %q would exceed its capability of %s: %s allocated + %s requested > %s",
				q.Name, name, u.String(), r.String(), limit.String())
		}
		return atCapability("queue %q would exceed its capability of %s: %s allocated + %s reserved by admitted work + %s requested > %s",
			q.Name, name, u.String(), held.String(), r.String(), limit.String())
	}
	return nil
}

// overShare names a requested resource in which the queue already holds its deserved share (with
// whole, in which allocated + req would exceed it), or "".
func overShare(allocated, deserved, req v1.ResourceList, whole bool) v1.ResourceName {
	for name, r := range req {
		if r.IsZero() {
			continue
		}
		d, ok := deserved[name]
		if !ok {
			return name
		}
		al := allocated[name].DeepCopy()
		if whole {
			al.Add(r)
			if al.Cmp(d) > 0 {
				return name
			}
		} else if al.Cmp(d) >= 0 {
			return name
		}
	}
	return ""
}
