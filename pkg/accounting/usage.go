package accounting

import (
	"context"
	"maps"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/client-go/tools/cache"
	resourcehelper "k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

// QueueUsage is what a queue's live (non-terminal) pods hold.
type QueueUsage struct {
	// Allocated is the sum of the requests of the queue's bound pods.
	Allocated v1.ResourceList
	// Pending is the sum of the requests of the queue's pods not bound yet.
	Pending v1.ResourceList
	// Pods counts the queue's live pods, bound or not.
	Pods int
	// Bound counts the queue's bound pods.
	Bound int
	// Terminating is the part of Allocated held by pods being deleted: it is on its way out.
	Terminating v1.ResourceList

	boundPriorities map[int32]int // bound pods by priority
}

// podUsage is one live pod's share of its queue.
type podUsage struct {
	// queue is resolved once, when the pod is first counted, and kept for the pod's life once
	// settled (see resolveQueue).
	queue    string
	settled  bool
	requests v1.ResourceList
	priority int32
	// terminating: the pod is being deleted.
	terminating bool
	// unit is the key of the QueueUnit the pod runs under, or "".
	unit string
	// group is the key of the pod's PodGroup, or "".
	group string
	// bound: the informer shows the pod on a node. The scheduler's copy assumed at Reserve, which
	// carries the node, never sets it: that is assumed, and Forget lets go of it.
	bound bool
	// assumed: the scheduler reserved a node for the pod (Reserve) and the informer does not show it
	// bound yet. It counts as bound until the binding arrives, Unreserve forgets it, or the pod is
	// deleted, whatever other updates of the pod arrive meanwhile (the scheduler itself patches
	// status.nominatedNodeName of a pod about to wait at Permit).
	assumed bool
	// informed: the informer delivered the pod. An entry that is only assumed goes with Forget.
	informed bool
}

// holds says whether the pod counts as holding its requests: bound, or assumed to be.
func (p podUsage) holds() bool { return p.bound || p.assumed }

// PodTable is the accounting's table of queue-scheduler's pods: the queue each is counted in, what
// it asks for, whether it holds room (bound, or assumed at Reserve until Unreserve or its binding),
// and per queue what its live pods hold. It is changed by the scheduler's pod informer and by
// Assume and Forget. Terminal pods leave the scheduler's pod informer, which filters them out, so
// they stop counting as soon as they finish.
type PodTable struct {
	acct *Accounting
	// informer is the scheduler's pod informer, and live its store: the pods as the API server
	// last told of them, which the table counts.
	informer cache.SharedIndexInformer
	live     cache.Indexer

	mu        sync.RWMutex
	pods      map[types.UID]podUsage
	shapes    resourceShapes // the pods' requests, one copy of each (see put)
	queues    map[string]*QueueUsage
	allocated v1.ResourceList                  // of all queues together, kept as pods come and go
	pending   v1.ResourceList                  // what the pods not bound ask for, of all queues together
	units     map[string]v1.ResourceList       // what each QueueUnit's bound pods hold, by unit key
	groups    map[string]v1.ResourceList       // what each PodGroup's bound pods hold, by group key
	asked     map[string]v1.ResourceList       // what each PodGroup's pending pods ask for, by group key
	waiting   map[string]map[types.UID]*v1.Pod // pods whose PodGroup does not exist yet, by group key
	subtree   map[string]v1.ResourceList       // what each queue and the queues below it hold
	// entered counts, per queue, the requests of its pods that started holding, all along: the usage
	// history charges each on entry. A pod seen holding from the first (at a start) was charged by
	// the scheduler that admitted it.
	entered map[string]v1.ResourceList
	tree    ancestry
	// changed names the queues whose usage or subtree total changed since the last snapshot was
	// built, so that the next one copies only those; allChanged, that every queue's may have.
	changed    map[string]struct{}
	allChanged bool
	// demandMoved names the queues whose allocated or pending list changed since the shares last
	// took them (takeDemandMoved): the demand of those only is set anew.
	demandMoved map[string]struct{}
	// numberChange numbers a change of usage, which the next snapshot includes; moves: the change
	// moves the demand (a pod came, went, or asks for more or less), and that snapshot computes the
	// shares anew. It is called in the same critical section as the change, so that whoever sees a
	// new pod builds a snapshot with it. A pod placed, let go or terminating moves usage only, which
	// every snapshot reads as it is.
	numberChange func(moves bool) uint64
	// freedSeq counts the room freed, as the usage counts it: a listener told of less has more on
	// its way.
	freedSeq atomic.Uint64
}

func newPodTable(a *Accounting, numberChange func(moves bool) uint64) *PodTable {
	return &PodTable{
		acct:         a,
		numberChange: numberChange,
		allocated:    v1.ResourceList{},
		pending:      v1.ResourceList{},
		pods:         map[types.UID]podUsage{},
		shapes:       resourceShapes{},
		units:        map[string]v1.ResourceList{},
		groups:       map[string]v1.ResourceList{},
		asked:        map[string]v1.ResourceList{},
		queues:       map[string]*QueueUsage{},
		waiting:      map[string]map[types.UID]*v1.Pod{},
		subtree:      map[string]v1.ResourceList{},
		entered:      map[string]v1.ResourceList{},
		changed:      map[string]struct{}{},
		demandMoved:  map[string]struct{}{},
		allChanged:   true,
	}
}

// watch counts the pods of queue-scheduler as the pod informer delivers them. A pod's queue is
// resolved once, so the first pods wait until the namespaces, whose annotations name queues, are
// known.
// It returns whether its pod handler has been handed every pod the informer started with.
func (u *PodTable) watch(ctx context.Context, pods, podGroups cache.SharedIndexInformer, namespacesSynced cache.InformerSynced) (cache.InformerSynced, error) {
	var namespacesKnown atomic.Bool
	upsert := func(obj any) {
		if !namespacesKnown.Load() && cache.WaitForCacheSync(ctx.Done(), namespacesSynced) {
			namespacesKnown.Store(true)
		}
		u.upsert(obj.(*v1.Pod))
	}
	counted, err := pods.AddEventHandler(cache.FilteringResourceEventHandler{
		FilterFunc: isQueuePod,
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    upsert,
			UpdateFunc: func(_, obj any) { upsert(obj) },
			DeleteFunc: func(obj any) { u.remove(obj) },
		},
	})
	if err != nil {
		return nil, err
	}
	_, err = podGroups.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if pg, ok := obj.(*schedulingv1beta1.PodGroup); ok {
				u.podGroupAdded(pg.Namespace + "/" + pg.Name)
			}
		},
	})
	return counted.HasSynced, err
}

// isQueuePod says whether a pod is scheduled by queue-scheduler, and so belongs to a queue.
func isQueuePod(obj any) bool {
	pod := podOf(obj)
	return pod != nil && pod.Spec.SchedulerName == schedulingv1beta1.SchedulerName
}

// RoomFreed is room a queue's pods gave back: a pod of the queue that held it left, was forgotten,
// or asks for less.
type RoomFreed struct {
	Queue string
	// Requests is what the pod held and no longer does; read, never changed.
	Requests v1.ResourceList
	// Pod left Node, when the room freed because a pod bound there left the informer; empty for a
	// pod that asks for less or an assumption forgotten.
	Pod  types.UID
	Node string
	// Seq numbers the room freed in the order the usage counted it, from 1 (RoomFreedSeq).
	Seq uint64
}

// RoomFreedSeq is the Seq of the last room freed the usage counted: a listener told of a lower one
// has room on its way to it that the usage counts free already.
func (u *PodTable) RoomFreedSeq() uint64 { return u.freedSeq.Load() }

// frees says whether replacing old by entry gives back room in old's queue.
func frees(old, entry podUsage) bool {
	grew, _ := quota.LessThanOrEqual(old.requests, entry.requests)
	return old.holds() && (!entry.holds() || entry.queue != old.queue || !grew)
}

// freedBy is the room replacing old by entry gives back in old's queue, when frees says it does: what
// old held, or what it held beyond entry's requests when entry still holds in the same queue.
func freedBy(old, entry podUsage) RoomFreed {
	if entry.holds() && entry.queue == old.queue {
		return RoomFreed{Queue: old.queue, Requests: quota.SubtractWithNonNegativeResult(old.requests, entry.requests)}
	}
	return RoomFreed{Queue: old.queue, Requests: old.requests}
}

// Usage returns what a queue's live pods hold.
func (u *PodTable) Usage(queue string) QueueUsage {
	u.mu.RLock()
	defer u.mu.RUnlock()
	q, ok := u.queues[queue]
	if !ok {
		return QueueUsage{}
	}
	return QueueUsage{Allocated: q.Allocated.DeepCopy(), Pending: q.Pending.DeepCopy(), Pods: q.Pods, Bound: q.Bound,
		Terminating: q.Terminating.DeepCopy()}
}

// PodCount is how many pods the accounting counts against the queue, bound or not, without copying
// its usage.
func (u *PodTable) PodCount(queue string) int {
	u.mu.RLock()
	defer u.mu.RUnlock()
	if q, ok := u.queues[queue]; ok {
		return q.Pods
	}
	return 0
}

// enter counts requests that started holding in queue, for the usage history's entry charge;
// nothing when no history is kept (Reserve calls it). Call with u.mu held.
func (u *PodTable) enter(queue string, requests v1.ResourceList) {
	if u.acct.History.settings.Keeps() {
		u.entered[queue] = quota.Add(u.entered[queue], requests)
	}
}

// leave takes back what enter counted for a pod unreserved before it was bound. Call with u.mu held.
func (u *PodTable) leave(queue string, requests v1.ResourceList) {
	if u.acct.History.settings.Keeps() {
		u.entered[queue] = quota.SubtractWithNonNegativeResult(u.entered[queue], requests)
	}
}

// heldLocked is what queue's pods hold, and its count of requests that started holding; call with
// u.mu held.
func (u *PodTable) heldLocked(queue string) (allocated, entered v1.ResourceList) {
	if q := u.queues[queue]; q != nil {
		allocated = q.Allocated
	}
	return allocated, u.entered[queue]
}

// enteredSnapshot is usage.entered as it stands; its lists are replaced, never changed in place.
func (a *Accounting) enteredSnapshot() map[string]v1.ResourceList {
	a.Pods.mu.RLock()
	defer a.Pods.mu.RUnlock()
	return maps.Clone(a.Pods.entered)
}

// usageSnapshot is every queue's usage at one moment, read under one lock for a computation of the
// shares. Its lists are the usage's own, which are replaced as pods come and go, never changed in
// place: they are read, never changed.
func (a *Accounting) usageSnapshot() map[string]QueueUsage {
	a.Pods.mu.RLock()
	defer a.Pods.mu.RUnlock()
	out := make(map[string]QueueUsage, len(a.Pods.queues))
	for name, q := range a.Pods.queues {
		out[name] = QueueUsage{Allocated: q.Allocated, Pending: q.Pending, Pods: q.Pods, Bound: q.Bound, Terminating: q.Terminating}
	}
	return out
}

// takeDemandMoved returns the usage now of each queue whose allocated or pending list changed since
// the last call (a zero usage for a queue that has no pods left), and starts counting anew. Its
// lists are the usage's own: read, never changed.
func (u *PodTable) takeDemandMoved() map[string]QueueUsage {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := make(map[string]QueueUsage, len(u.demandMoved))
	for name := range u.demandMoved {
		if q, ok := u.queues[name]; ok {
			out[name] = QueueUsage{Allocated: q.Allocated, Pending: q.Pending, Pods: q.Pods, Bound: q.Bound, Terminating: q.Terminating}
		} else {
			out[name] = QueueUsage{}
		}
	}
	clear(u.demandMoved)
	return out
}

// queueOf returns the queue a counted pod was resolved to, once settled.
func (u *PodTable) queueOf(uid types.UID) (string, bool) {
	u.mu.RLock()
	defer u.mu.RUnlock()
	p, ok := u.pods[uid]
	return p.queue, ok && p.settled
}

// Count counts pod now if the accounting has not counted it yet, as the informer's store holds it:
// a reader that sees a pod before the accounting's handler of the pod informer does (the scheduling
// queue's handler ran first) takes the snapshot after it, with the pod in its demand and shares. The
// handler then finds it counted. A pod the store no longer holds is not counted.
func (u *PodTable) Count(pod *v1.Pod) {
	if !isQueuePod(pod) || !u.acct.Store.namespacesSynced() {
		return // another scheduler's, which no queue counts; or the handler's, once the namespaces are known
	}
	u.mu.RLock()
	_, counted := u.pods[pod.UID]
	u.mu.RUnlock()
	if counted {
		return
	}
	if current, ok := u.current(pod); ok {
		u.count(current, true)
	}
}

// Leaving says whether the accounting has seen a pod go: being deleted, or no longer counted. From
// then on every snapshot's reclaimable spare leaves it out.
func (u *PodTable) Leaving(pod *v1.Pod) bool {
	u.mu.RLock()
	defer u.mu.RUnlock()
	p, ok := u.pods[pod.UID]
	return !ok || p.terminating
}

// Holds says whether the accounting counts pod against its queue: bound, or assumed at Reserve.
func (u *PodTable) Holds(pod *v1.Pod) bool {
	u.mu.RLock()
	defer u.mu.RUnlock()
	p, ok := u.pods[pod.UID]
	return ok && p.holds()
}

// groupAllocated returns what the bound or assumed live pods of a PodGroup hold.
func (a *Accounting) groupAllocated(pg *schedulingv1beta1.PodGroup) v1.ResourceList {
	a.Pods.mu.RLock()
	defer a.Pods.mu.RUnlock()
	return a.Pods.groups[pg.Namespace+"/"+pg.Name].DeepCopy()
}

// groupRequested returns what the live pods of a PodGroup hold and ask for.
func (a *Accounting) groupRequested(pg *schedulingv1beta1.PodGroup) v1.ResourceList {
	key := pg.Namespace + "/" + pg.Name
	a.Pods.mu.RLock()
	defer a.Pods.mu.RUnlock()
	return quota.Add(a.Pods.groups[key], a.Pods.asked[key])
}

// UnitAllocated returns what the bound live pods of the QueueUnit key ("namespace/name") hold.
func (u *PodTable) UnitAllocated(key string) v1.ResourceList {
	u.mu.RLock()
	defer u.mu.RUnlock()
	return u.units[key].DeepCopy()
}

// HasBoundBelow says whether the queue has a bound pod of lower priority than priority: one that an
// ordinary preemption within the queue could take.
func (u *PodTable) HasBoundBelow(queue string, priority int32) bool {
	u.mu.RLock()
	defer u.mu.RUnlock()
	q, ok := u.queues[queue]
	if !ok {
		return false
	}
	for p := range q.boundPriorities {
		if p < priority {
			return true
		}
	}
	return false
}

// upsert counts a pod as the informer shows it. The pod keeps the queue and unit it was first
// counted under, and an assumption made at Reserve stands until the informer shows the pod bound.
func (u *PodTable) upsert(pod *v1.Pod) { u.count(pod, false) }

// count is upsert; onSight, it counts only a pod not counted yet that the informer's store still
// holds, checked under the lock that the handler's removal takes: the store loses a deleted pod
// before the handler hears of it, so a pod counted here is either still there or removed after.
func (u *PodTable) count(pod *v1.Pod, onSight bool) {
	entry, err := u.entryFor(pod)
	if err != nil && onSight {
		return // the handler's to wait for what the pod lacks
	}
	if err != nil {
		u.remove(pod)
		u.wait(pod)
		// Waiting before looking again: a PodGroup added meanwhile either finds the pod waiting, or
		// is found here.
		if group := u.acct.Gangs.Key(pod); group != "" {
			if _, ok := u.acct.Gangs.PodGroup(group); ok {
				u.podGroupAdded(group)
			}
		}
		return
	}
	entry.informed = true
	u.mu.Lock()
	old, existed := u.pods[pod.UID]
	if onSight {
		if _, stored := u.current(pod); existed || !stored {
			u.mu.Unlock()
			return
		}
	}
	if existed {
		entry.assumed = old.assumed && !entry.bound
		if countsAlike(old, entry) {
			// Most updates of a pod (its conditions, its nomination) change nothing counted.
			u.put(pod.UID, entry)
			u.mu.Unlock()
			return
		}
		u.subtract(old)
	}
	u.add(entry)
	if existed && !old.holds() && entry.holds() {
		u.enter(entry.queue, entry.requests)
	}
	placed := existed && old.holds() != entry.holds()
	demand := movesDemand(old, entry, existed)
	changed := demand || placed || old.terminating != entry.terminating
	if changed {
		u.numberChange(demand || placed && u.placingMoves(entry.queue))
	}
	u.put(pod.UID, entry)
	var freed RoomFreed
	if existed && frees(old, entry) {
		freed = freedBy(old, entry)
		freed.Seq = u.freedSeq.Add(1)
	}
	u.mu.Unlock()
	if changed {
		u.acct.Events.QueueUsage.notify(entry.queue)
	}
	if existed && old.queue != entry.queue {
		u.acct.Events.QueueUsage.notify(old.queue)
	}
	if freed.Seq != 0 {
		u.acct.Events.RoomFreed.notify(freed)
	}
}

// placingMoves says whether a pod of queue placed or let go moves the shares though the demand stays:
// when the usage history charges each pod on entry and moves the shares (the charge counts at the
// next computation), or when queue is Suspended (it asks for what it holds, no more).
func (u *PodTable) placingMoves(queue string) bool {
	if s := u.acct.History.settings; s.Keeps() && s.Factor > 0 && s.EntryCharge > 0 {
		return true
	}
	q, ok := u.acct.Store.Queue(queue)
	return ok && q.Spec.State == schedulingv1beta1.QueueStateSuspended
}

// movesDemand says whether counting entry in place of old (or of nothing, unless existed) changes
// what a queue, unit or PodGroup asks for in all: the demand the shares divide. A pod placed, let
// go or terminating moves none.
func movesDemand(old, entry podUsage, existed bool) bool {
	return !existed || old.queue != entry.queue || old.unit != entry.unit || old.group != entry.group ||
		!quota.Equals(old.requests, entry.requests)
}

// countsAlike says whether two entries of a pod count the same everywhere (add and subtract read
// nothing else): replacing one by the other changes no sum and no share.
func countsAlike(a, b podUsage) bool {
	return a.queue == b.queue && a.unit == b.unit && a.group == b.group && a.holds() == b.holds() &&
		a.terminating == b.terminating && a.priority == b.priority && quota.Equals(a.requests, b.requests)
}

// entryFor describes a pod as it stands: its queue and unit as already counted and settled, else
// resolved now.
func (u *PodTable) entryFor(pod *v1.Pod) (podUsage, error) {
	u.mu.RLock()
	old, existed := u.pods[pod.UID]
	u.mu.RUnlock()
	entry := podUsage{
		queue:       old.queue,
		unit:        old.unit,
		settled:     old.settled,
		requests:    resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}),
		bound:       pod.Spec.NodeName != "",
		priority:    corev1helpers.PodPriority(pod),
		terminating: pod.DeletionTimestamp != nil,
		group:       u.acct.Gangs.Key(pod),
	}
	if existed && old.settled {
		return entry, nil
	}
	unit := u.acct.Store.UnitOf(pod)
	queue, settled, err := u.acct.resolveQueue(pod, unit)
	if err != nil {
		return podUsage{}, err
	}
	// A pod on a node keeps its queue: what it holds stays where it was counted.
	entry.queue, entry.settled, entry.unit = queue, settled || entry.bound, ""
	if unit != nil {
		entry.unit = UnitKey(unit)
	}
	return entry, nil
}

func (u *PodTable) remove(obj any) {
	pod := podOf(obj)
	if pod == nil {
		return
	}
	u.mu.Lock()
	if group := u.acct.Gangs.Key(pod); group != "" {
		delete(u.waiting[group], pod.UID)
	}
	old, existed := u.pods[pod.UID]
	var seq uint64
	if existed {
		u.drop(pod.UID)
		u.subtract(old)
		u.numberChange(true)
		if old.holds() {
			seq = u.freedSeq.Add(1)
		}
	}
	u.mu.Unlock()
	if existed {
		u.acct.Events.QueueUsage.notify(old.queue)
	}
	if seq != 0 {
		u.acct.Events.RoomFreed.notify(RoomFreed{Queue: old.queue, Requests: old.requests, Pod: pod.UID, Node: pod.Spec.NodeName, Seq: seq})
	}
}

func (u *PodTable) wait(pod *v1.Pod) {
	group := u.acct.Gangs.Key(pod)
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.waiting[group] == nil {
		u.waiting[group] = map[types.UID]*v1.Pod{}
	}
	u.waiting[group][pod.UID] = pod
}

// podGroupAdded counts the pods that were waiting for the PodGroup group.
func (u *PodTable) podGroupAdded(group string) {
	u.mu.Lock()
	pods := u.waiting[group]
	delete(u.waiting, group)
	u.mu.Unlock()
	for _, pod := range pods {
		// The waiting copy may be older than what the pod handler has seen since: count the pod as
		// the informer's store holds it now, if it is still there.
		if current, ok := u.current(pod); ok {
			u.upsert(current)
		}
	}
}

// current returns the pod as the pod informer's store holds it, if it is still the same pod.
func (u *PodTable) current(pod *v1.Pod) (*v1.Pod, bool) {
	if u.live == nil {
		return pod, true
	}
	obj, ok, err := u.live.GetByKey(pod.Namespace + "/" + pod.Name)
	if err != nil || !ok {
		return nil, false
	}
	current, ok := obj.(*v1.Pod)
	return current, ok && current.UID == pod.UID
}

func (u *PodTable) add(p podUsage) {
	u.changed[p.queue] = struct{}{}
	u.demandMoved[p.queue] = struct{}{}
	q := u.queues[p.queue]
	if q == nil {
		q = &QueueUsage{Allocated: v1.ResourceList{}, Pending: v1.ResourceList{}, boundPriorities: map[int32]int{}}
		u.queues[p.queue] = q
	}
	q.Pods++
	if p.holds() {
		q.Bound++
		q.boundPriorities[p.priority]++
		q.Allocated = quota.Add(q.Allocated, p.requests)
		u.allocated = quota.Add(u.allocated, p.requests)
		u.addSubtree(p.queue, p.requests, 1)
		addTo(u.units, p.unit, p.requests)
		addTo(u.groups, p.group, p.requests)
		if p.terminating {
			q.Terminating = quota.Add(q.Terminating, p.requests)
		}
	} else {
		q.Pending = quota.Add(q.Pending, p.requests)
		u.pending = quota.Add(u.pending, p.requests)
		addTo(u.asked, p.group, p.requests)
	}
}

func (u *PodTable) subtract(p podUsage) {
	u.changed[p.queue] = struct{}{}
	u.demandMoved[p.queue] = struct{}{}
	q := u.queues[p.queue]
	if q == nil {
		return
	}
	q.Pods--
	if p.holds() {
		q.Bound--
		if q.boundPriorities[p.priority]--; q.boundPriorities[p.priority] <= 0 {
			delete(q.boundPriorities, p.priority)
		}
		q.Allocated = quota.RemoveZeros(quota.SubtractWithNonNegativeResult(q.Allocated, p.requests))
		u.allocated = quota.SubtractWithNonNegativeResult(u.allocated, p.requests)
		u.addSubtree(p.queue, p.requests, -1)
		takeFrom(u.units, p.unit, p.requests)
		takeFrom(u.groups, p.group, p.requests)
		if p.terminating {
			q.Terminating = quota.RemoveZeros(quota.SubtractWithNonNegativeResult(q.Terminating, p.requests))
		}
	} else {
		q.Pending = quota.RemoveZeros(quota.SubtractWithNonNegativeResult(q.Pending, p.requests))
		u.pending = quota.SubtractWithNonNegativeResult(u.pending, p.requests)
		takeFrom(u.asked, p.group, p.requests)
	}
	if q.Pods == 0 {
		delete(u.queues, p.queue)
	}
}

// addTo adds requests to what key holds, unless key is empty.
func addTo(held map[string]v1.ResourceList, key string, requests v1.ResourceList) {
	if key != "" {
		held[key] = quota.Add(held[key], requests)
	}
}

// takeFrom takes requests off what key holds, forgetting key once it holds nothing.
func takeFrom(held map[string]v1.ResourceList, key string, requests v1.ResourceList) {
	if key == "" {
		return
	}
	if left := quota.RemoveZeros(quota.SubtractWithNonNegativeResult(held[key], requests)); len(left) > 0 {
		held[key] = left
	} else {
		delete(held, key)
	}
}

// Assume counts pod as bound from now on, before the binding reaches the informer; a scheduler's
// Reserve calls it so that the next pods see the resources taken. The assumption holds until the
// informer shows the pod bound, Forget undoes it, or the pod is deleted.
func (u *PodTable) Assume(pod *v1.Pod) {
	if isQueuePod(pod) {
		u.assume(pod)
	}
}

// Forget undoes Assume when the binding did not happen (Unreserve). A pod the informer shows bound
// already, or never assumed, is left as it is.
func (u *PodTable) Forget(pod *v1.Pod) {
	u.forget(pod.UID)
}

func (u *PodTable) assume(pod *v1.Pod) {
	entry, err := u.entryFor(pod)
	if err != nil {
		return // a pod without a queue is never scheduled: QueueState holds it
	}
	u.mu.Lock()
	old, existed := u.pods[pod.UID]
	if existed && old.holds() {
		u.mu.Unlock()
		return
	}
	if existed {
		u.subtract(old)
		entry.informed = old.informed
	}
	// Assumed on a node, the pod keeps the queue it was scheduled for. The scheduler hands over its
	// copy with the node set: bound stays the informer's word, so that Forget lets go of it.
	entry.assumed, entry.settled, entry.bound = true, true, false
	// A pod assumed before the informer delivered it, or under another queue, moves the demand.
	u.numberChange(movesDemand(old, entry, existed) || u.placingMoves(entry.queue))
	u.put(pod.UID, entry)
	u.add(entry)
	u.enter(entry.queue, entry.requests)
	u.mu.Unlock()
	u.acct.Events.QueueUsage.notify(entry.queue)
	if existed && old.queue != entry.queue {
		u.acct.Events.QueueUsage.notify(old.queue)
	}
}

func (u *PodTable) forget(uid types.UID) {
	u.mu.Lock()
	old, existed := u.pods[uid]
	if !existed || !old.assumed {
		u.mu.Unlock()
		return
	}
	u.subtract(old)
	u.leave(old.queue, old.requests)
	if old.informed {
		old.assumed = false
		u.put(uid, old)
		u.add(old)
	} else {
		u.drop(uid)
	}
	u.numberChange(!old.informed || u.placingMoves(old.queue))
	seq := u.freedSeq.Add(1)
	u.mu.Unlock()
	u.acct.Events.QueueUsage.notify(old.queue)
	u.acct.Events.RoomFreed.notify(RoomFreed{Queue: old.queue, Requests: old.requests, Seq: seq}) // an assumed pod held room, and no longer does
}
