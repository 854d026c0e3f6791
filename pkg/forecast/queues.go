package forecast

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	quota "k8s.io/apiserver/pkg/quota/v1"

	"github.com/queue-scheduler/queue-scheduler/pkg/fairshare"
	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
)

// queues are the queues' usage as a play goes, and the policy's snapshot of them.
type queues struct {
	dims     []v1.ResourceName
	byName   map[string]*queueState
	root     *queueState
	leaves   []string
	capacity v1.ResourceList
	// held and asked are what all pods hold (those of no known queue included) and what the waiting
	// work asks for.
	held, asked Vector
	deserved    map[string]v1.ResourceList
	// allocated and demands are each queue's, as lists; claims each leaf queue's claim on idle room
	// (policy.Claim), and claimable their sum (policy.Claimable), kept as the leaves change.
	allocated, demands, claims map[string]v1.ResourceList
	claimable                  v1.ResourceList
}

// queueState is one queue's spec, its place in the tree, and what its own pods hold and ask for.
type queueState struct {
	spec              Queue
	parent            *queueState
	children          []*queueState
	share             *fairshare.Queue
	leaf              bool
	allocated, asking Vector
	// subtree is what the queue and those below it hold.
	subtree Vector
}

func newQueues(s *Snapshot) *queues {
	q := &queues{dims: s.Dims, byName: make(map[string]*queueState, len(s.Queues)), held: make(Vector, len(s.Dims)),
		asked: make(Vector, len(s.Dims)), allocated: map[string]v1.ResourceList{}, demands: map[string]v1.ResourceList{},
		claims: map[string]v1.ResourceList{}}
	for _, spec := range s.Queues {
		q.byName[spec.Name] = &queueState{spec: spec, allocated: make(Vector, len(s.Dims)), asking: make(Vector, len(s.Dims)),
			subtree: make(Vector, len(s.Dims)),
			share:   &fairshare.Queue{Name: spec.Name, Weight: spec.Weight, Guarantee: spec.Guarantee, Capability: spec.Capability}}
	}
	for _, qs := range q.byName {
		if parent, ok := q.byName[qs.spec.Parent]; ok && qs.spec.Parent != "" {
			qs.parent = parent
			parent.children = append(parent.children, qs)
			parent.share.Children = append(parent.share.Children, qs.share)
		} else if qs.spec.Parent == "" {
			q.root = qs
		}
	}
	for name, qs := range q.byName {
		if len(qs.children) == 0 && qs != q.root {
			q.leaves = append(q.leaves, name)
			qs.leaf = true
		}
	}
	capacity := make(Vector, len(s.Dims))
	for _, n := range s.Nodes {
		capacity.Add(n.Free, 1)
		for _, r := range n.Running {
			capacity.Add(r.Requests, 1)
		}
	}
	q.capacity = q.list(capacity)
	return q
}

// hold counts room held (sign 1) or given back (-1) by queue's pods, in the queue and in the
// subtrees it is in.
func (q *queues) hold(queue string, v Vector, sign int64) {
	q.held.Add(v, sign)
	qs, ok := q.byName[queue]
	if !ok {
		return
	}
	qs.allocated.Add(v, sign)
	for depth := 0; qs != nil && depth <= maxDepth; qs, depth = qs.parent, depth+1 {
		qs.subtree.Add(v, sign)
	}
}

// ask counts room asked for (sign 1) or no longer asked for (-1) by queue's waiting work.
func (q *queues) ask(queue string, v Vector, sign int64) {
	if qs, ok := q.byName[queue]; ok {
		q.asked.Add(v, sign)
		qs.asking.Add(v, sign)
	}
}

// snapshot is the policy's snapshot of the queues now, the fair shares computed again from their
// demand: a fresh snapshot, as the scheduler's is once the shares include every change.
func (q *queues) snapshot() *policy.Snapshot {
	for name, qs := range q.byName {
		q.count(name, qs)
		qs.share.Demand = q.demands[name]
	}
	q.deserved = map[string]v1.ResourceList{}
	if q.root != nil {
		q.deserved = fairshare.Compute(q.root.share, q.capacity)
		q.deserved[q.root.spec.Name] = q.capacity
	}
	q.claimable = v1.ResourceList{}
	for _, name := range q.leaves {
		q.claims[name] = policy.Claim(q.deserved[name], q.demands[name], q.allocated[name])
		q.claimable = quota.Add(q.claimable, q.claims[name])
	}
	s := &policy.Snapshot{Changes: 1, Capacity: q.capacity, SharedCapacity: q.capacity,
		Queues: make(map[string]*policy.Queue, len(q.byName))}
	for name, qs := range q.byName {
		s.Queues[name] = q.value(qs)
	}
	q.totals(s)
	return s
}

// recounted is snap after work of queue started or left, which changes what the queue and those
// above it hold or ask for, and the totals; the shares stay as they are. The snapshot is the play's
// own, from snapshot: it is brought up to date in place.
func (q *queues) recounted(snap *policy.Snapshot, queue string) *policy.Snapshot {
	for qs, depth := q.byName[queue], 0; qs != nil && depth < maxDepth; qs, depth = qs.parent, depth+1 {
		name := qs.spec.Name
		q.count(name, qs)
		snap.Queues[name] = q.value(qs)
		if qs.leaf {
			claim := policy.Claim(q.deserved[name], q.demands[name], q.allocated[name])
			q.claimable = quota.RemoveZeros(quota.Add(quota.Subtract(q.claimable, q.claims[name]), claim))
			q.claims[name] = claim
		}
	}
	q.totals(snap)
	return snap
}

// count keeps the lists of what the queue holds and asks for, for policy.Claimable.
func (q *queues) count(name string, qs *queueState) {
	demand := qs.allocated.Clone()
	demand.Add(qs.asking, 1)
	q.allocated[name], q.demands[name] = q.list(qs.allocated), q.list(demand)
}

// value is the queue as the policy reads it.
func (q *queues) value(qs *queueState) *policy.Queue {
	name := qs.spec.Name
	return &policy.Queue{Name: name, Parent: qs.spec.Parent, Capability: qs.spec.Capability, Reclaimable: qs.spec.Reclaimable,
		Suspended: qs.spec.Suspended, Deserved: q.deserved[name], Allocated: q.allocated[name], Pending: q.list(qs.asking),
		Subtree: q.list(qs.subtree)}
}

// totals sets what the snapshot sums over the queues.
func (q *queues) totals(s *policy.Snapshot) {
	s.Allocated, s.Pending = q.list(q.held), q.list(q.asked)
	s.Claimable = q.claimable
}

// maxDepth bounds a walk over the queue tree, so that a cycle that got past the webhook cannot
// loop.
const maxDepth = 64

// list is v as a resource list, without the pod count.
func (q *queues) list(v Vector) v1.ResourceList {
	out := v1.ResourceList{}
	for i, name := range q.dims {
		switch {
		case i >= len(v) || name == v1.ResourcePods:
		case name == v1.ResourceCPU:
			out[name] = *resource.NewMilliQuantity(v[i], resource.DecimalSI)
		case name == v1.ResourceMemory:
			out[name] = *resource.NewQuantity(v[i], resource.BinarySI)
		default:
			out[name] = *resource.NewQuantity(v[i], resource.DecimalSI)
		}
	}
	return out
}
