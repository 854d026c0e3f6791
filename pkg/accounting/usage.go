package accounting

import (
	"sync"

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
	queue    string
	requests v1.ResourceList
	bound    bool
	priority int32
	// terminating: the pod is being deleted.
	terminating bool
	// unit is the key of the QueueUnit the pod runs under, or "".
	unit string
}

// usage tracks per queue what its live pods hold. Terminal pods leave the scheduler's pod informer,
// which filters them out, so they stop counting as soon as they finish.
type usage struct {
	acct *Accounting

	mu        sync.RWMutex
	pods      map[types.UID]podUsage
	queues    map[string]*QueueUsage
	allocated v1.ResourceList                  // of all queues together, kept as pods come and go
	units     map[string]v1.ResourceList       // what each QueueUnit's bound pods hold, by unit key
	waiting   map[string]map[types.UID]*v1.Pod // pods whose PodGroup does not exist yet, by group key
	listeners []func(queue string)
}

func newUsage(a *Accounting) *usage {
	return &usage{
		acct:      a,
		allocated: v1.ResourceList{},
		pods:      map[types.UID]podUsage{},
		units:     map[string]v1.ResourceList{},
		queues:    map[string]*QueueUsage{},
		waiting:   map[string]map[types.UID]*v1.Pod{},
	}
}

func (u *usage) watch(pods, podGroups cache.SharedIndexInformer) error {
	if _, err := pods.AddEventHandler(cache.FilteringResourceEventHandler{
		FilterFunc: isQueuePod,
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { u.upsert(obj.(*v1.Pod)) },
			UpdateFunc: func(_, obj any) { u.upsert(obj.(*v1.Pod)) },
			DeleteFunc: func(obj any) { u.remove(obj) },
		},
	}); err != nil {
		return err
	}
	_, err := podGroups.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if pg, ok := obj.(*schedulingv1beta1.PodGroup); ok {
				u.podGroupAdded(pg.Namespace + "/" + pg.Name)
			}
		},
	})
	return err
}

// isQueuePod says whether a pod is scheduled by queue-scheduler, and so belongs to a queue.
func isQueuePod(obj any) bool {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	pod, ok := obj.(*v1.Pod)
	return ok && pod.Spec.SchedulerName == schedulingv1beta1.SchedulerName
}

// OnQueueUsageChange registers f to be told the name of a queue whose usage changed. Register before
// the informers start; f must not block.
func (a *Accounting) OnQueueUsageChange(f func(queue string)) {
	a.usage.mu.Lock()
	defer a.usage.mu.Unlock()
	a.usage.listeners = append(a.usage.listeners, f)
}

// Usage returns what a queue's live pods hold.
func (a *Accounting) Usage(queue string) QueueUsage {
	a.usage.mu.RLock()
	defer a.usage.mu.RUnlock()
	q, ok := a.usage.queues[queue]
	if !ok {
		return QueueUsage{}
	}
	return QueueUsage{Allocated: q.Allocated.DeepCopy(), Pending: q.Pending.DeepCopy(), Pods: q.Pods, Bound: q.Bound,
		Terminating: q.Terminating.DeepCopy()}
}

// UnitAllocated returns what the bound live pods of the QueueUnit key ("namespace/name") hold.
func (a *Accounting) UnitAllocated(key string) v1.ResourceList {
	a.usage.mu.RLock()
	defer a.usage.mu.RUnlock()
	return a.usage.units[key].DeepCopy()
}

// HasBoundBelow says whether the queue has a bound pod of lower priority than priority: one that an
// ordinary preemption within the queue could take.
func (a *Accounting) HasBoundBelow(queue string, priority int32) bool {
	a.usage.mu.RLock()
	defer a.usage.mu.RUnlock()
	q, ok := a.usage.queues[queue]
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

func (u *usage) upsert(pod *v1.Pod) {
	u.apply(pod, false)
}

// apply counts pod with its current binding; with onlyTracked, only if the pod is counted already, in
// the same critical section, so that a pod deleted meanwhile is not brought back.
func (u *usage) apply(pod *v1.Pod, onlyTracked bool) {
	unit := u.acct.UnitOf(pod)
	queue, err := u.acct.queueOf(pod, unit)
	if err != nil {
		if !onlyTracked {
			u.remove(pod)
			u.wait(pod)
		}
		return
	}
	entry := podUsage{
		queue:       queue,
		requests:    resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}),
		bound:       pod.Spec.NodeName != "",
		priority:    corev1helpers.PodPriority(pod),
		terminating: pod.DeletionTimestamp != nil,
	}
	if unit != nil {
		entry.unit = UnitKey(unit)
	}
	u.mu.Lock()
	old, existed := u.pods[pod.UID]
	if onlyTracked && !existed {
		u.mu.Unlock()
		return
	}
	if existed {
		u.subtract(old)
	}
	u.pods[pod.UID] = entry
	u.add(entry)
	listeners := u.listeners
	u.mu.Unlock()
	notify(listeners, entry.queue)
	if existed && old.queue != entry.queue {
		notify(listeners, old.queue)
	}
}

func (u *usage) remove(obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return
	}
	u.mu.Lock()
	if group := schedulingv1beta1.PodGroupKey(pod); group != "" {
		delete(u.waiting[group], pod.UID)
	}
	old, existed := u.pods[pod.UID]
	if existed {
		delete(u.pods, pod.UID)
		u.subtract(old)
	}
	listeners := u.listeners
	u.mu.Unlock()
	if existed {
		notify(listeners, old.queue)
	}
}

func (u *usage) wait(pod *v1.Pod) {
	group := schedulingv1beta1.PodGroupKey(pod)
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.waiting[group] == nil {
		u.waiting[group] = map[types.UID]*v1.Pod{}
	}
	u.waiting[group][pod.UID] = pod
}

// podGroupAdded counts the pods that were waiting for the PodGroup group.
func (u *usage) podGroupAdded(group string) {
	u.mu.Lock()
	pods := u.waiting[group]
	delete(u.waiting, group)
	u.mu.Unlock()
	for _, pod := range pods {
		u.upsert(pod)
	}
}

func (u *usage) add(p podUsage) {
	q := u.queues[p.queue]
	if q == nil {
		q = &QueueUsage{Allocated: v1.ResourceList{}, Pending: v1.ResourceList{}, boundPriorities: map[int32]int{}}
		u.queues[p.queue] = q
	}
	q.Pods++
	if p.bound {
		q.Bound++
		q.boundPriorities[p.priority]++
		q.Allocated = quota.Add(q.Allocated, p.requests)
		u.allocated = quota.Add(u.allocated, p.requests)
		if p.unit != "" {
			u.units[p.unit] = quota.Add(u.units[p.unit], p.requests)
		}
		if p.terminating {
			q.Terminating = quota.Add(q.Terminating, p.requests)
		}
	} else {
		q.Pending = quota.Add(q.Pending, p.requests)
	}
}

func (u *usage) subtract(p podUsage) {
	q := u.queues[p.queue]
	if q == nil {
		return
	}
	q.Pods--
	if p.bound {
		q.Bound--
		if q.boundPriorities[p.priority]--; q.boundPriorities[p.priority] <= 0 {
			delete(q.boundPriorities, p.priority)
		}
		q.Allocated = quota.RemoveZeros(quota.SubtractWithNonNegativeResult(q.Allocated, p.requests))
		u.allocated = quota.SubtractWithNonNegativeResult(u.allocated, p.requests)
		if p.unit != "" {
			if left := quota.RemoveZeros(quota.SubtractWithNonNegativeResult(u.units[p.unit], p.requests)); len(left) > 0 {
				u.units[p.unit] = left
			} else {
				delete(u.units, p.unit)
			}
		}
		if p.terminating {
			q.Terminating = quota.RemoveZeros(quota.SubtractWithNonNegativeResult(q.Terminating, p.requests))
		}
	} else {
		q.Pending = quota.RemoveZeros(quota.SubtractWithNonNegativeResult(q.Pending, p.requests))
	}
	if q.Pods == 0 {
		delete(u.queues, p.queue)
	}
}

func notify(listeners []func(string), queue string) {
	for _, f := range listeners {
		f(queue)
	}
}

// Assume counts pod as bound to nodeName from now on, before the binding reaches the informer; a
// scheduler's Reserve calls it so that the next pods see the resources taken.
func (a *Accounting) Assume(pod *v1.Pod, nodeName string) {
	a.usage.setBound(pod, nodeName)
}

// Forget undoes Assume when the binding did not happen (Unreserve).
func (a *Accounting) Forget(pod *v1.Pod) {
	a.usage.setBound(pod, "")
}

// setBound re-counts a tracked pod as bound to nodeName, or unbound when it is empty. A pod the
// informer has not delivered, or has already deleted, is left alone: counting it would outlive it.
func (u *usage) setBound(pod *v1.Pod, nodeName string) {
	if !isQueuePod(pod) {
		return
	}
	copied := pod.DeepCopy()
	copied.Spec.NodeName = nodeName
	u.apply(copied, true)
}
