// Package policy is queue-scheduler's scheduling policy as pure functions of values: whether a pod
// or a unit of work may take room in its queue now, what a refused pod's queue must free for it
// (its headroom), what reclaim may take back and from which queues, and what a computation of the
// fair shares derives (the room queues below their share can still claim, the spare above a share,
// a queue's dominant share). It reads a Snapshot of the queues and takes no lock, informer, client
// or clock: pkg/accounting builds the snapshots, and the plugins and the controller call the policy
// on them.
package policy

import (
	"slices"

	v1 "k8s.io/api/core/v1"
)

// Snapshot is the queues' state at one moment, as the policy reads it. It is built by the
// accounting after each computation of the fair shares and on each change it counts, and never
// changed once built: a scheduling cycle takes one and every plugin of the cycle reads that one.
type Snapshot struct {
	// Changes is how many changes of usage, capacity, demand or the queue tree the accounting had
	// numbered when the snapshot was built: the fair shares it holds include every one of them.
	Changes uint64
	// QueueSpecs is the version of the queues' specs the shares were computed under.
	QueueSpecs int64
	// SpareGrowths counts the snapshots, up to this one, in which some queue held more above its
	// share than in the one before.
	SpareGrowths uint64
	// Capacity is what the cluster's nodes can hold now; SharedCapacity, what the shares divided.
	Capacity, SharedCapacity v1.ResourceList
	// Claimable is what the queues below their share can still claim: the sum of the leaves' Claim.
	Claimable v1.ResourceList
	// UnitDemand is what the queues' Enqueued QueueUnits and Pending PodGroups ask for beyond their
	// pods.
	UnitDemand v1.ResourceList
	// Allocated and Pending are what all queues' pods hold, and what those not bound ask for.
	Allocated, Pending v1.ResourceList
	// Queues are the queues by name as of the last whole build (or fold); Updated, those whose usage
	// or share changed since, which take their place. Read a queue with Queue: a snapshot taken after
	// a change of usage or a computation of the shares shares Queues with the one before and copies
	// only Updated, so that neither the build nor what a cycle keeps grows with the number of queues.
	Queues, Updated map[string]*Queue
	// Spare is, for each reclaimable leaf queue above its share, what it holds above it, not
	// counting its terminating pods: each such queue's Spare.
	Spare map[string]v1.ResourceList
}

// Queue is one queue in a Snapshot.
type Queue struct {
	Name string
	// Parent is the queue's parent, "" for the root.
	Parent string
	// Capability is the most the queue and those below it may hold, per resource.
	Capability v1.ResourceList
	// Reclaimable: what the queue holds above its share may be taken back.
	Reclaimable bool
	// Suspended: the queue's pods neither start, reclaim nor preempt.
	Suspended bool
	// Deserved is the queue's fair share; for the root, the cluster's capacity.
	Deserved v1.ResourceList
	// Allocated is what the queue's bound (or assumed) pods hold; Pending, what its other pods ask
	// for; Terminating, the part of Allocated held by pods being deleted.
	Allocated, Pending, Terminating v1.ResourceList
	// Subtree is what the queue and the queues below it hold.
	Subtree v1.ResourceList
	// Claim is, for a leaf, what it deserves up to its demand less what it holds (policy.Claim);
	// Spare, for a reclaimable leaf, what it holds above its share but its terminating pods
	// (policy.AboveShare). Both read the queue's Allocated: they follow every pod placed or let go,
	// with no computation of the shares.
	Claim, Spare v1.ResourceList
}

// Queue returns the named queue, or nil.
func (s *Snapshot) Queue(name string) *Queue {
	if q, ok := s.Updated[name]; ok {
		return q
	}
	return s.Queues[name]
}

// maxDepth bounds a walk up the queue tree: the webhook refuses cycles, and this keeps a cycle that
// got past it from looping.
const maxDepth = 64

// Ancestry calls f for queue and each of its ancestors known to the snapshot, the root included; a
// chain that runs into a cycle stops before it repeats a queue.
func (s *Snapshot) Ancestry(queue string, f func(*Queue)) {
	var buf [maxDepth]string
	seen := buf[:0]
	for name := queue; name != "" && len(seen) < maxDepth && !slices.Contains(seen, name); {
		q := s.Queue(name)
		if q == nil {
			return
		}
		seen = append(seen, name)
		f(q)
		name = q.Parent
	}
}
