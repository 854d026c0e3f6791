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
// when something changed since the last, and shared by every reader until the next change.
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
	// spareGrown hear of a snapshot in which some queue holds more above its share than in the one
	// before; grew signals tellSpareGrown to tell them.
	spareGrown listeners[struct{}]
	grew       chan struct{}
}

// Snapshot returns the queues' state now, as the policy reads it. A scheduling cycle takes one and
// reads only that one (see pkg/cycle); it is never changed, and is the same value for every caller
// until something changes.
func (a *Accounting) Snapshot() *policy.Snapshot {
	if last := a.snapshots.latest.Load(); last != nil && a.current(last) {
		return last
	}
	next, grew := a.buildSnapshot()
	if grew {
		select {
		case a.snapshots.grew <- struct{}{}:
		default: // told already, and not yet heard: one call tells of both
		}
	}
	return next
}

// tellSpareGrown calls the OnSpareGrown listeners after each snapshot whose spare grew, until ctx
// ends. They are called on a goroutine of their own, never the builder's: a snapshot is built where
// it is first read, which may be a PreEnqueue plugin under the scheduling queue's lock, and the
// listeners activate pods, which takes that lock.
func (s *snapshots) tellSpareGrown(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.grew:
			s.spareGrown.notify(struct{}{})
		}
	}
}

// buildSnapshot builds the next snapshot, unless the last is still current, and says whether some
// queue's spare grew over the last's.
func (a *Accounting) buildSnapshot() (next *policy.Snapshot, spareGrown bool) {
	a.snapshots.building.Lock()
	defer a.snapshots.building.Unlock()
	last := a.snapshots.latest.Load()
	// The numbers first, then what they number: a change that comes while the snapshot is built is
	// either in it or calls for the next one.
	untracked := a.shares.untrackedGen.Load()
	sh := a.readShares()
	if last != nil && last.Changes == a.shares.dirtyGen.Load() && last.SharesInclude == sh.computedGen &&
		untracked == a.snapshots.untracked.Load() {
		return last, false
	}
	full := last == nil || untracked != a.snapshots.untracked.Load()
	var queues []*schedulingv1beta1.Queue
	if full {
		queues = a.AllQueues()
	}
	next = &policy.Snapshot{SharesInclude: sh.computedGen, QueueSpecs: sh.queueSpecs, UnitDemandCurrent: untracked <= sh.computedGen,
		Capacity: a.shares.capacityOf.get(), SharedCapacity: sh.capacity, UnitDemand: sh.unitDemand}
	a.usage.mu.Lock()
	next.Changes, next.SharesMoved = a.shares.dirtyGen.Load(), a.shares.movedGen.Load()
	next.Allocated, next.Pending = a.usage.allocated, a.usage.pending
	spareMoved := true
	if full || a.usage.allChanged {
		if queues == nil {
			queues = a.AllQueues()
		}
		a.usage.wholeQueues(next, queues, sh)
	} else {
		spareMoved = a.usage.updatedQueues(next, last, sharesMoved(a.snapshots.shares, sh, last), sh)
	}
	clear(a.usage.changed)
	a.usage.allChanged = false
	a.usage.mu.Unlock()
	a.snapshots.shares = sh
	if last != nil {
		next.SpareGrowths = last.SpareGrowths
		if spareGrown = spareMoved && spareGrew(last.Spare, next.Spare); spareGrown {
			next.SpareGrowths++
		}
	}
	a.snapshots.untracked.Store(untracked)
	a.snapshots.latest.Store(next)
	return next, spareGrown
}

// OnSpareGrown registers f to be called after a snapshot is built in which some queue holds more
// above its share than in the one before (its usage grew, or its share shrank): there may be more to
// take back. A snapshot is built after every computation of the shares, which every change of usage
// asks for. f is called on a goroutine of the accounting's, never the builder's.
func (a *Accounting) OnSpareGrown(f func()) { a.snapshots.spareGrown.add(func(struct{}) { f() }) }

// SpareGrowths is how many snapshots so far found some queue holding more above its share than the
// one before, as of a snapshot built now: a decision on a snapshot whose SpareGrowths is lower
// missed a growth, and the OnSpareGrown call it may have missed too.
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
func (u *usage) wholeQueues(next *policy.Snapshot, queues []*schedulingv1beta1.Queue, sh publishedShares) {
	next.Queues, next.Claimable, next.Spare = make(map[string]*policy.Queue, len(queues)), v1.ResourceList{}, map[string]v1.ResourceList{}
	for _, q := range queues {
		demand, leaf := sh.leafDemand[q.Name]
		value := u.queueValue(specOf(q), sh.deserved[q.Name], demand, leaf)
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

// sharesMoved names the queues whose deserved share or demand differs between the shares before
// and now (a computation came between), for a build on last that was built with before. The shares
// replace a queue's lists when they change and keep them when they do not: the same list is the
// same amount.
func sharesMoved(before, now publishedShares, last *policy.Snapshot) map[string]struct{} {
	moved := map[string]struct{}{}
	if before.computedGen == now.computedGen {
		return moved
	}
	for name := range last.Queues {
		if !sameList(before.deserved[name], now.deserved[name]) || !sameList(before.leafDemand[name], now.leafDemand[name]) {
			moved[name] = struct{}{}
		}
	}
	return moved
}

// foldAt is how many queues Updated may hold: beyond it, and beyond a quarter of the queues, a
// build folds them into a copy of Queues, so that a build copies at most a few of them for each
// queue changed.
const foldAt = 64

// updatedQueues sets next's queues as last's, but those whose usage changed since and those moved
// by the shares, copied with their usage and share now; the claims and spare change with them, and
// spareMoved says whether the spare did. The queues of the last whole build stay shared, and Updated
// grows until it is folded into them or the next whole build. Call with u.mu held.
func (u *usage) updatedQueues(next, last *policy.Snapshot, moved map[string]struct{}, sh publishedShares) (spareMoved bool) {
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
		if d, ok := sh.deserved[name]; ok {
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

// current says whether nothing changed since snap was built: no change counted, no computation of
// the shares that included a new change, no change of queues, nodes or units. It takes no lock but
// the shares' read lock.
func (a *Accounting) current(snap *policy.Snapshot) bool {
	if snap.Changes != a.shares.dirtyGen.Load() || a.shares.untrackedGen.Load() != a.snapshots.untracked.Load() {
		return false
	}
	a.shares.mu.RLock()
	defer a.shares.mu.RUnlock()
	return snap.SharesInclude == a.shares.computedGen
}

// SharesCaughtUp says whether the shares now include every change snap saw that can move them: a
// pod that waited for fresher shares than snap's may be tried again.
func (a *Accounting) SharesCaughtUp(snap *policy.Snapshot) bool {
	return a.sharesGeneration() >= snap.SharesMoved
}

// sharesGeneration is how many changes the published shares include.
func (a *Accounting) sharesGeneration() uint64 {
	a.shares.mu.RLock()
	defer a.shares.mu.RUnlock()
	return a.shares.computedGen
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
func (u *usage) queueValue(spec *policy.Queue, deserved, demand v1.ResourceList, leaf bool) *policy.Queue {
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
