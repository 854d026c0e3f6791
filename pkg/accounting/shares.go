package accounting

import (
	"context"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/client-go/tools/cache"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/fairshare"
	"github.com/queue-scheduler/queue-scheduler/pkg/history"
	"github.com/queue-scheduler/queue-scheduler/pkg/metrics"
	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
)

// sharesInterval is the least time between two builds of the snapshot that the accounting makes
// itself, when changes come and no reader builds one: the shares and their listeners stay current
// with no scheduling going on. Changes that arrive meanwhile are folded into the next.
const sharesInterval = 100 * time.Millisecond

// sharesCostFactor spaces those builds by this many times the last one's duration, when that is
// longer than sharesInterval: with many queues, they take at most a fifth of a core.
const sharesCostFactor = 4

// shares keeps every queue's deserved share, computed by the snapshot's builder whenever capacity,
// demand or the queue tree changed since the last computation: a snapshot's shares include every
// change it counts.
type shares struct {
	capacityOf *clusterCapacity
	dirty      chan struct{}
	// counting keeps the three numbers below in step: a change raises them under it, and a build
	// reads them together under it (counters), so that it never sees a change numbered and not yet
	// marked as moving the shares or as untracked. Readers that only compare with a snapshot's
	// numbers load them without it: a torn read only calls for a build.
	counting sync.Mutex
	// dirtyGen counts the changes; computedGen is the count the shares include.
	dirtyGen atomic.Uint64
	// movedGen is the number of the latest change that can move the shares: a change of demand, or
	// an untracked one. A pod placed or let go moves usage only (see usage.placingMoves for when it
	// moves more): what is derived from usage (the claims, the spare) each snapshot works out from
	// its own, and no computation is due.
	movedGen    atomic.Uint64
	computedGen uint64 // under mu
	// queueSpecs is the version of the queues' specs (queueSpecsVersion) read before the tree the
	// shares were computed on was built.
	queueSpecs int64 // under mu
	mu         sync.RWMutex
	deserved   map[string]v1.ResourceList
	capacity   v1.ResourceList
	// leafDemand is each leaf queue's demand as the shares were computed (as if not Suspended):
	// with a queue's usage now, its claim (policy.Claim).
	leafDemand map[string]v1.ResourceList
	// weights are the effective weights the usage history gave, where they differ from the queues'.
	weights fairshare.Weights
	// unitDemand is what the queues' Enqueued QueueUnits and Pending PodGroups ask for beyond their
	// pods, as of the last computation.
	unitDemand v1.ResourceList
	// untrackedGen numbers the latest change whose effect on the demand is not kept as it happens
	// (a queue, a PodGroup, a QueueUnit, a node): the next computation builds the tree anew.
	untrackedGen atomic.Uint64
	// tree is the last computation's, under the snapshots' building lock.
	tree *shareTree
	// unsynced: the last computation came before every pod was counted, and so before the usage
	// history started; the first build once they are computes again.
	unsynced atomic.Bool
}

func newShares() *shares {
	s := &shares{dirty: make(chan struct{}, 1), deserved: map[string]v1.ResourceList{}}
	s.capacityOf = newClusterCapacity(s.markDirty)
	return s
}

// markDirty numbers a change whose effect on the demand is not kept as it happens: the next
// snapshot computes the shares on a tree built anew. It never blocks but on counting.
func (s *shares) markDirty() { s.number(true, true) }

// numberedChange numbers a change, which the next snapshot includes; moves says whether it can
// move the shares (see movedGen), which that snapshot then computes anew.
func (s *shares) numberedChange(moves bool) uint64 { return s.number(moves, false) }

func (s *shares) number(moves, untracked bool) uint64 {
	s.counting.Lock()
	gen := s.dirtyGen.Add(1)
	if moves {
		s.movedGen.Store(gen)
	}
	if untracked {
		s.untrackedGen.Store(gen)
	}
	s.counting.Unlock()
	select {
	case s.dirty <- struct{}{}:
	default:
	}
	return gen
}

// counters are the shares' numbers read together.
type counters struct{ changes, moved, untracked uint64 }

func (s *shares) counters() counters {
	s.counting.Lock()
	defer s.counting.Unlock()
	return counters{changes: s.dirtyGen.Load(), moved: s.movedGen.Load(), untracked: s.untrackedGen.Load()}
}

// due says whether a build at c must compute the shares: none computed yet, a change that can move
// them since the last computation, or a change of the queues, units, PodGroups or nodes since the
// tree was built.
func (s *shares) due(c counters) bool {
	s.mu.RLock()
	computed := s.computedGen
	s.mu.RUnlock()
	return s.tree == nil || c.moved > computed || s.tree.untracked != c.untracked
}

// dirtyOnChange marks the shares dirty on every change of the informers' objects that can move them;
// it returns the registrations' HasSynced, true once each handler has seen the informer's initial
// objects.
func (s *shares) dirtyOnChange(informers ...cache.SharedIndexInformer) ([]cache.InformerSynced, error) {
	var synced []cache.InformerSynced
	for _, inf := range informers {
		reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: func(any) { s.markDirty() },
			UpdateFunc: func(old, obj any) {
				if movesShares(old, obj) {
					s.markDirty()
				}
			},
			DeleteFunc: func(any) { s.markDirty() },
		})
		if err != nil {
			return nil, err
		}
		synced = append(synced, reg.HasSynced)
	}
	return synced, nil
}

// movesShares says whether an update can change the shares: a queue's spec (weight, capability,
// guarantee, parent, a Suspended state), a QueueUnit's or PodGroup's spec or phase (only Enqueued
// units and Pending groups add to the demand). The controller's writes to a queue's status do not,
// and are many.
func movesShares(old, obj any) bool {
	switch o := old.(type) {
	case *schedulingv1beta1.Queue:
		n, ok := obj.(*schedulingv1beta1.Queue)
		return !ok || o.Generation != n.Generation
	case *schedulingv1beta1.QueueUnit:
		n, ok := obj.(*schedulingv1beta1.QueueUnit)
		return !ok || o.Generation != n.Generation || o.Status.Phase != n.Status.Phase
	case *schedulingv1beta1.PodGroup:
		n, ok := obj.(*schedulingv1beta1.PodGroup)
		return !ok || o.Generation != n.Generation || o.Status.Phase != n.Status.Phase
	}
	return true
}

// runShares builds the snapshot when changes come and no reader built one, at most every
// sharesInterval, until ctx ends; and while usage moves the shares, every historyRefresh with nothing
// else changing. Its builds tell the listeners of the shares and of spare growth as a reader's do.
func (a *Accounting) runShares(ctx context.Context) {
	for {
		var refresh, unsynced <-chan time.Time
		if d := a.historyRefresh(); d > 0 {
			refresh = a.clock.After(d)
		}
		if a.shares.unsynced.Load() {
			// Looked at again until every pod is counted, when the usage history starts.
			unsynced = a.clock.After(sharesInterval)
		}
		select {
		case <-ctx.Done():
			return
		case <-a.shares.dirty:
		case <-unsynced:
		case <-refresh:
			// The passage of time is the change: numbered as any other, so that the next snapshot
			// computes the shares it moved.
			a.shares.numberedChange(true)
			select {
			case <-a.shares.dirty:
			default:
			}
		}
		start := a.clock.Now()
		a.Snapshot()
		select {
		case <-ctx.Done():
			return
		case <-a.clock.After(max(sharesInterval, sharesCostFactor*a.clock.Since(start))):
		}
	}
}

// historyRefresh is how often the shares are computed again while nothing changes, when usage moves
// them: a hundredth of the half-life, within a second and a minute, in which usage decays by 0.7%.
// Zero when usage does not move the shares.
func (a *Accounting) historyRefresh() time.Duration {
	s := a.History.settings
	if !s.Keeps() || s.Factor <= 0 {
		return 0
	}
	return min(max(s.HalfLife/100, time.Second), time.Minute)
}

// Deserved returns a queue's fair share now, as a snapshot built now holds it; for the root, the
// cluster's capacity.
func (a *Accounting) Deserved(queue string) v1.ResourceList {
	if q := a.Snapshot().Queue(queue); q != nil {
		return q.Deserved.DeepCopy()
	}
	return nil
}

// computeShares computes and publishes the shares from the usage, the queues and the capacity as
// they are now, which include every change up to c, advances the whole ledger when the tree is built
// anew, when the ledger starts and when it moves the shares (the builds advance the queues whose
// usage changed in between), and returns the
// queues whose deserved share or effective weights changed, and those a snapshot built on the last
// one copies again. Call with the snapshots' building lock held: one computation at a time, each in
// a build.
func (a *Accounting) computeShares(c counters) sharesMoved {
	start := a.clock.Now()
	defer func() {
		metrics.ShareComputations.Inc()
		metrics.ShareComputationDuration.Observe(a.clock.Since(start).Seconds())
	}()
	capacity := a.shares.capacityOf.get()
	moved := a.Pods.takeDemandMoved()
	now, synced, factor := a.clock.Now(), a.Synced(), a.History.settings.Factor
	t := a.shares.tree
	whole := t == nil || t.untracked != c.untracked
	var all map[string]QueueUsage
	usage := func() map[string]QueueUsage {
		if all == nil {
			all = a.usageSnapshot()
		}
		return all
	}
	// The ledger is brought up to now whole when the queues changed, when it starts (the first
	// computation once every pod is counted) and when it moves the shares; the snapshots' builds
	// advance the queues whose usage changed in between.
	if synced && (whole || a.shares.unsynced.Load() || factor > 0) {
		a.History.advance(a.Store.AllQueues(), usage(), a.enteredSnapshot(), now)
	}
	a.shares.unsynced.Store(!synced)
	var leaves []string
	if whole {
		specs := a.queueSpecsVersion()
		t = a.newShareTree(usage(), c.untracked, specs)
		a.shares.tree = t
	} else {
		leaves = t.follow(a, moved)
	}
	if factor > 0 {
		t.setUsage(a.History.at(now))
	}
	deserved, weights := t.tree.Share(capacity, fairshare.History{Factor: factor, Horizon: a.History.settings.Horizon()})
	a.shares.mu.Lock()
	defer a.shares.mu.Unlock()
	var out sharesMoved
	if whole {
		out.deserved = listsMoved(a.shares.deserved, deserved)
	} else {
		out.deserved = slices.Clone(t.tree.Moved())
	}
	if !sameList(a.shares.capacity, capacity) {
		out.deserved = append(out.deserved, schedulingv1beta1.RootQueue)
	}
	out.deserved = append(out.deserved, weightsMoved(a.shares.weights, weights)...)
	out.queues = make(map[string]struct{}, len(out.deserved)+len(leaves))
	for _, name := range slices.Concat(out.deserved, leaves) {
		out.queues[name] = struct{}{}
	}
	a.shares.capacity, a.shares.leafDemand, a.shares.unitDemand = capacity, t.leafDemand, t.unitDemand
	a.shares.deserved, a.shares.weights = deserved, weights
	a.shares.computedGen, a.shares.queueSpecs = c.changes, t.specs
	return out
}

// sharesMoved is what a computation of the shares moved: the queues whose deserved share or
// effective weights changed, told to the listeners; and with them those whose demand as if not
// Suspended did, which a snapshot built on the last copies again.
type sharesMoved struct {
	deserved []string
	queues   map[string]struct{}
}

// listsMoved names the queues whose list differs between before and now, or that one of them
// lacks.
func listsMoved(before, now map[string]v1.ResourceList) []string {
	var moved []string
	for name, d := range now {
		if !sameList(before[name], d) {
			moved = append(moved, name)
		}
	}
	for name := range before {
		if _, ok := now[name]; !ok {
			moved = append(moved, name)
		}
	}
	return moved
}

// weightsMoved names the queues whose effective weights differ between before and now, to a
// thousandth (as they are shown); a weight listed on one side only differs.
func weightsMoved(before, now fairshare.Weights) []string {
	var moved []string
	differ := func(a, b map[v1.ResourceName]float64) bool {
		if len(a) != len(b) {
			return true
		}
		for name, w := range a {
			if v, ok := b[name]; !ok || math.Round(w*1000) != math.Round(v*1000) {
				return true
			}
		}
		return false
	}
	for queue, w := range now {
		if differ(w, before[queue]) {
			moved = append(moved, queue)
		}
	}
	for queue := range before {
		if _, ok := now[queue]; !ok {
			moved = append(moved, queue)
		}
	}
	return moved
}

// shareTree builds the fair-share tree from the cached queues, each with its demand (queueDemand)
// given usage, extra and with used, its own usage history. Each queue is taken as as gives it (as it
// is, for nil). demands holds each queue's demand as if it were not Suspended, beyond what each asks
// for beyond its pods.
func (a *Accounting) shareTree(usage map[string]QueueUsage, used map[string]history.Usage, as QueuesAs, extra map[string]v1.ResourceList) (root *fairshare.Queue, demands, beyond map[string]v1.ResourceList) {
	demands, beyond = make(map[string]v1.ResourceList, len(usage)), map[string]v1.ResourceList{}
	var build func(q *schedulingv1beta1.Queue) *fairshare.Queue
	build = func(q *schedulingv1beta1.Queue) *fairshare.Queue {
		if as != nil {
			q = as(q)
		}
		d := a.queueDemand(q, usage[q.Name], extra[q.Name])
		demands[q.Name] = d.open
		if d.beyond != nil {
			beyond[q.Name] = d.beyond
		}
		node := &fairshare.Queue{Name: q.Name, Weight: q.Spec.Weight, Guarantee: q.Spec.Guarantee.Resource,
			Capability: q.Spec.Capability, Demand: d.shared, Usage: used[q.Name].ResourceSeconds}
		for _, c := range a.Store.Children(q.Name) {
			if _, visited := demands[c.Name]; !visited {
				node.Children = append(node.Children, build(c))
			}
		}
		return node
	}
	top, ok := a.Store.Queue(schedulingv1beta1.RootQueue)
	if !ok {
		top = &schedulingv1beta1.Queue{}
		top.Name = schedulingv1beta1.RootQueue
	}
	return build(top), demands, beyond
}

// demand is what a queue asks for in a computation of the shares.
type demand struct {
	// open is what its live pods hold and ask for, what its Enqueued QueueUnits and Pending
	// PodGroups ask for beyond their pods (beyond), and the extra asked of it; shared is the same,
	// but for a Suspended queue, which asks for nothing more than it holds.
	open, shared, beyond v1.ResourceList
}

// queueDemand is q's demand, with u its usage and extra asked of it beside.
func (a *Accounting) queueDemand(q *schedulingv1beta1.Queue, u QueueUsage, extra v1.ResourceList) demand {
	d := demand{beyond: a.workDemand(q.Name)}
	d.open = sumOf(u.Allocated, u.Pending, d.beyond, extra)
	d.shared = d.open
	if a.Store.SchedulingState(q) == schedulingv1beta1.QueueStateSuspended {
		d.shared = u.Allocated
	}
	return d
}

// QueuesAs gives the queue as a computation of the shares takes it: the queue itself, or a copy of
// it changed.
type QueuesAs func(*schedulingv1beta1.Queue) *schedulingv1beta1.Queue

// SharesIf computes the queues' fair shares as they are and as they would be, on one reading of
// the inputs a computation reads (capacity, the queues' usage and usage history): now with each
// queue as it is, then with each as as gives it and asking for extra beside its demand. It also
// returns the usage it read. Nothing is stored: the shares the scheduler goes by stay as they are.
// The usage history is read as of the last computation of the shares, moved on to now.
func (a *Accounting) SharesIf(as QueuesAs, extra map[string]v1.ResourceList) (now, then map[string]v1.ResourceList, usage map[string]QueueUsage) {
	capacity := a.shares.capacityOf.get()
	usage = a.usageSnapshot()
	factor := a.History.settings.Factor
	var used map[string]history.Usage
	if factor > 0 {
		used = a.History.at(a.clock.Now())
	}
	compute := func(as QueuesAs, extra map[string]v1.ResourceList) map[string]v1.ResourceList {
		root, _, _ := a.shareTree(usage, used, as, extra)
		deserved, _ := fairshare.ComputeRemembering(root, capacity, fairshare.History{Factor: factor, Horizon: a.History.settings.Horizon()})
		deserved[schedulingv1beta1.RootQueue] = capacity
		return deserved
	}
	return compute(nil, nil), compute(as, extra), usage
}

// sumOf adds lists up, leaving out resources whose sum is zero. The result is one of lists itself
// when that is the only one not empty and holds no zero: callers only read it, and the usage lists
// are replaced, never changed in place. Most queues at most computations ask for nothing beyond
// what they hold, and then nothing is allocated.
func sumOf(lists ...v1.ResourceList) v1.ResourceList {
	var sum v1.ResourceList
	for _, l := range lists {
		switch {
		case len(l) == 0:
		case sum == nil:
			sum = l
		default:
			sum = quota.Add(sum, l)
		}
	}
	for _, q := range sum {
		if q.IsZero() {
			return quota.RemoveZeros(sum)
		}
	}
	return sum
}

// workDemand is what a queue's Enqueued QueueUnits ask for, and its Pending PodGroups' minResources
// beyond what their pods ask for already (a gang whose job creates its pods only once the group is
// admitted asks through its PodGroup); nil when they ask for nothing.
func (a *Accounting) workDemand(queue string) v1.ResourceList {
	var demand v1.ResourceList
	for _, unit := range a.Store.QueueUnitsOf(queue) {
		if !unit.Dequeued() {
			demand = quota.Add(demand, unit.Spec.Resource)
		}
	}
	for _, pg := range a.Store.PodGroupsOf(queue) {
		if len(pg.Spec.MinResources) > 0 && (pg.Status.Phase == "" || pg.Status.Phase == schedulingv1beta1.PodGroupPending) {
			demand = quota.Add(demand, quota.SubtractWithNonNegativeResult(pg.Spec.MinResources, a.groupRequested(pg)))
		}
	}
	return demand
}

// EffectiveWeights are the weights the usage history gives a queue among its siblings, by resource,
// as a snapshot built now computed them; nil where they are its own weight.
func (a *Accounting) EffectiveWeights(queue string) map[v1.ResourceName]float64 {
	a.Snapshot()
	a.shares.mu.RLock()
	defer a.shares.mu.RUnlock()
	return a.shares.weights[queue]
}

// DominantShare is how much of its deserved share a queue holds now, in the resource where it holds
// the most (policy.DominantShare).
func (a *Accounting) DominantShare(queue string) float64 {
	q := a.Snapshot().Queue(queue)
	if q == nil {
		// A queue that does not exist deserves nothing: whatever its pods hold is too much.
		return policy.DominantShare(a.Pods.Usage(queue).Allocated, nil)
	}
	return policy.DominantShare(q.Allocated, q.Deserved)
}
