package accounting

import (
	"context"
	"maps"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	quota "k8s.io/apiserver/pkg/quota/v1"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
)

// snapshots publishes the accounting's state as immutable policy.Snapshots: one is built on demand
// when something changed since the last, with the fair shares computed anew when a change can move
// them, and shared by every reader until the next change.
type snapshots struct {
	// building makes one build at a time; latest is the last one built.
	building sync.Mutex
	latest   atomic.Pointer[policy.Snapshot]
	// untracked is the shares' untrackedGen the latest was built at: a change to the queues, nodes
	// or units since calls for a whole new one, a change of usage only for a copy of the queues whose
	// usage changed.
	untracked atomic.Uint64
	// shares are those the latest was built with, under building.
	shares publishedShares
	// told is what the builds left to tell the listeners.
	told notices
}

// Snapshot returns the queues' state now, as the policy reads it, with the fair shares computed on
// it. A scheduling cycle takes one and reads only that one (see pkg/cycle); it is never changed, and
// is the same value for every caller until something changes.
func (a *Accounting) Snapshot() *policy.Snapshot {
	if last := a.snapshots.latest.Load(); last != nil && a.current(last) {
		return last
	}
	return a.buildSnapshot()
}

// notices are what the builds leave to tell the listeners of the shares and of spare growth, which
// are called on a goroutine of the accounting's (tell), never the builder's: a snapshot is built
// where it is first read, which may be a PreEnqueue plugin under the scheduling queue's lock, and the
// listeners activate pods, which takes that lock. Notices not told yet are told together.
type notices struct {
	mu sync.Mutex
	// deserved names the queues whose share changed; computed, that shares were computed; grew, that
	// some queue's spare grew.
	deserved       map[string]struct{}
	computed, grew bool
	ready          chan struct{}
}

func newNotices() notices {
	return notices{deserved: map[string]struct{}{}, ready: make(chan struct{}, 1)}
}

// leave records what a build has to tell.
func (n *notices) leave(computed bool, deserved []string, grew bool) {
	if !computed && !grew {
		return
	}
	n.mu.Lock()
	n.computed = n.computed || computed
	n.grew = n.grew || grew
	for _, q := range deserved {
		n.deserved[q] = struct{}{}
	}
	n.mu.Unlock()
	select {
	case n.ready <- struct{}{}:
	default: // left already, and not yet told: one telling tells both
	}
}

// tell calls the listeners with what the builds left, until ctx ends: the queues whose share
// changed, then that shares were computed, then that spare grew.
func (a *Accounting) tell(ctx context.Context) {
	n := &a.snapshots.told
	for {
		select {
		case <-ctx.Done():
			return
		case <-n.ready:
		}
		n.mu.Lock()
		deserved, computed, grew := n.deserved, n.computed, n.grew
		n.deserved, n.computed, n.grew = map[string]struct{}{}, false, false
		n.mu.Unlock()
		for q := range deserved {
			a.Events.Deserved.notify(q)
		}
		if computed {
			a.Events.SharesComputed.notify(struct{}{})
		}
		if grew {
			a.Events.SpareGrown.notify(struct{}{})
		}
	}
}

// buildSnapshot builds the next snapshot, unless the last is still current, computing the shares
// first when a change since the last computation can move them.
func (a *Accounting) buildSnapshot() *policy.Snapshot {
	a.snapshots.building.Lock()
	defer a.snapshots.building.Unlock()
	last := a.snapshots.latest.Load()
	// The numbers first, then what they number: a change that comes while the snapshot is built is
	// either in it or calls for the next one.
	c := a.shares.counters()
	untracked, changes := c.untracked, c.changes
	if last != nil && last.Changes == changes && untracked == a.snapshots.untracked.Load() {
		return last
	}
	var moved sharesMoved
	computed := a.shares.due(c) || a.shares.unsynced.Load() && a.Synced()
	if computed {
		moved = a.computeShares(c)
	}
	sh := a.readShares()
	full := last == nil || untracked != a.snapshots.untracked.Load()
	var queues []*schedulingv1beta1.Queue
	if full {
		queues = a.Store.AllQueues()
	}
	next := &policy.Snapshot{QueueSpecs: sh.queueSpecs, Capacity: a.shares.capacityOf.get(), SharedCapacity: sh.capacity,
		UnitDemand: sh.unitDemand}
	// Changes is the number read before the shares were computed: they include every change up to
	// it. The usage read below may hold later ones, which make the next reader build anew.
	next.Changes = changes
	synced, now := a.Synced(), a.clock.Now()
	a.Pods.mu.Lock()
	next.Allocated, next.Pending = a.Pods.allocated, a.Pods.pending
	spareMoved := true
	if full || a.Pods.allChanged {
		if queues == nil {
			queues = a.Store.AllQueues()
		}
		a.Pods.wholeQueues(next, queues, sh)
	} else {
		if moved.queues == nil {
			moved.queues = map[string]struct{}{}
		}
		spareMoved = a.Pods.updatedQueues(next, last, moved.queues, sh)
	}
	if synced {
		a.History.advanceQueues(a.Pods.changed, a.Pods.heldLocked, now)
	}
	clear(a.Pods.changed)
	a.Pods.allChanged = false
	a.Pods.mu.Unlock()
	a.snapshots.shares = sh
	grew := false
	if last != nil {
		next.SpareGrowths = last.SpareGrowths
		if grew = spareMoved && spareGrew(last.Spare, next.Spare); grew {
			next.SpareGrowths++
		}
	}
	a.snapshots.untracked.Store(untracked)
	a.snapshots.latest.Store(next)
	a.snapshots.told.leave(computed, moved.deserved, grew)
	return next
}

// SpareGrowths is how many snapshots so far found some queue holding more above its share than the
// one before, as of a snapshot built now: a decision on a snapshot whose SpareGrowths is lower
// missed a growth, and the Events.SpareGrown call it may have missed too.
func (a *Accounting) SpareGrowths() uint64 { return a.Snapshot().SpareGrowths }

// spareGrew says whether some queue holds more above its share in now than in before, in any
// resource.
func spareGrew(before, now map[string]v1.ResourceList) bool {
	for queue, spare := range now {
		for name, q := range spare {
			if b, ok := before[queue][name]; !ok || q.Cmp(b) > 0 {
				return true
			}
		}
	}
	return false
}

// wholeQueues sets next's queues, each with its usage now, and the claims and spare they sum to.
// Call with u.mu held.
func (u *PodTable) wholeQueues(next *policy.Snapshot, queues []*schedulingv1beta1.Queue, sh publishedShares) {
	next.Queues, next.Claimable, next.Spare = make(map[string]*policy.Queue, len(queues)), v1.ResourceList{}, map[string]v1.ResourceList{}
	for _, q := range queues {
		demand, leaf := sh.leafDemand[q.Name]
		value := u.queueValue(specOf(q), sh.deservedOf(q.Name), demand, leaf)
		next.Queues[q.Name] = value
		for name, c := range value.Claim {
			sum := next.Claimable[name]
			sum.Add(c)
			next.Claimable[name] = sum
		}
		if value.Spare != nil {
			next.Spare[q.Name] = value.Spare
		}
	}
}

// foldAt is how many queues Updated may hold: beyond it, and beyond a quarter of the queues, a
// build folds them into a copy of Queues, so that a build copies at most a few of them for each
// queue changed.
const foldAt = 64

// updatedQueues sets next's queues as last's, but those whose usage changed since and those moved
// by the shares, copied with their usage and share now; the claims and spare change with them, and
// spareMoved says whether the spare did. The queues of the last whole build stay shared, and Updated
// grows until it is folded into them or the next whole build. Call with u.mu held.
func (u *PodTable) updatedQueues(next, last *policy.Snapshot, moved map[string]struct{}, sh publishedShares) (spareMoved bool) {
	next.Queues, next.Updated = last.Queues, make(map[string]*policy.Queue, len(last.Updated)+len(u.changed)+len(moved))
	next.Claimable, next.Spare = last.Claimable, last.Spare
	maps.Copy(next.Updated, last.Updated)
	spareCopied := false
	maps.Copy(moved, u.changed)
	for name := range moved {
		prev := last.Queue(name)
		if prev == nil {
			continue
		}
		deserved := prev.Deserved
		if d := sh.deservedOf(name); d != nil {
			deserved = d
		}
		demand, leaf := sh.leafDemand[name]
		value := u.queueValue(prev, deserved, demand, leaf)
		next.Updated[name] = value
		if !quota.Equals(prev.Claim, value.Claim) {
			next.Claimable = quota.RemoveZeros(quota.Add(quota.SubtractWithNonNegativeResult(next.Claimable, prev.Claim), value.Claim))
		}
		if quota.Equals(prev.Spare, value.Spare) {
			continue
		}
		if !spareCopied {
			next.Spare, spareCopied = maps.Clone(last.Spare), true
		}
		if value.Spare != nil {
			next.Spare[name] = value.Spare
		} else {
			delete(next.Spare, name)
		}
	}
	if len(next.Updated) > max(foldAt, len(next.Queues)/4) {
		next.Queues = maps.Clone(next.Queues)
		maps.Copy(next.Queues, next.Updated)
		next.Updated = nil
	}
	return spareCopied
}

// current says whether nothing changed since snap was built: no change counted, no change of
// queues, nodes or units. It takes no lock.
func (a *Accounting) current(snap *policy.Snapshot) bool {
	return snap.Changes == a.shares.dirtyGen.Load() && a.shares.untrackedGen.Load() == a.snapshots.untracked.Load()
}

// ChangedSince says whether something changed since snap was built: a decision that read snap and
// state kept outside it (victims under way) must be made again on a new one.
func (a *Accounting) ChangedSince(snap *policy.Snapshot) bool {
	return a.shares.dirtyGen.Load() != snap.Changes
}

// publishedShares is one computation's shares, read under one lock.
type publishedShares struct {
	computedGen          uint64
	queueSpecs           int64
	capacity, unitDemand v1.ResourceList
	deserved, leafDemand map[string]v1.ResourceList
}

// deservedOf is a queue's deserved share; for the root, the capacity shared.
func (s publishedShares) deservedOf(queue string) v1.ResourceList {
	if queue == schedulingv1beta1.RootQueue {
		return s.capacity
	}
	return s.deserved[queue]
}

func (a *Accounting) readShares() publishedShares {
	a.shares.mu.RLock()
	defer a.shares.mu.RUnlock()
	s := a.shares
	return publishedShares{computedGen: s.computedGen, queueSpecs: s.queueSpecs, capacity: s.capacity,
		unitDemand: s.unitDemand, deserved: s.deserved, leafDemand: s.leafDemand}
}

// specOf is a queue's place in the tree and its limits, as the policy reads them.
func specOf(q *schedulingv1beta1.Queue) *policy.Queue {
	parent := ParentOf(q)
	if q.Name == schedulingv1beta1.RootQueue {
		parent = ""
	}
	return &policy.Queue{Name: q.Name, Parent: parent, Capability: q.Spec.Capability,
		Reclaimable: q.Spec.Reclaimable == nil || *q.Spec.Reclaimable,
		Suspended:   q.Spec.State == schedulingv1beta1.QueueStateSuspended}
}

// queueValue is spec with deserved and the queue's usage now; for a leaf, with demand as the shares
// were computed, its claim and spare. Its usage lists are the usage's own, which are replaced as pods
// come and go, never changed in place. Call with u.mu held.
func (u *PodTable) queueValue(spec *policy.Queue, deserved, demand v1.ResourceList, leaf bool) *policy.Queue {
	q := *spec
	q.Deserved, q.Subtree = deserved, u.subtree[q.Name]
	q.Allocated, q.Pending, q.Terminating, q.Claim, q.Spare = nil, nil, nil, nil, nil
	if use, ok := u.queues[q.Name]; ok {
		q.Allocated, q.Pending, q.Terminating = use.Allocated, use.Pending, use.Terminating
	}
	if leaf {
		q.Claim = quota.RemoveZeros(policy.Claim(deserved, demand, q.Allocated))
		if q.Reclaimable {
			q.Spare = policy.AboveShare(q.Allocated, q.Terminating, deserved)
		}
	}
	return &q
}
