package accounting

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/client-go/tools/cache"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

// maxDepth bounds a walk up the queue tree: the webhook refuses cycles, and this keeps a cycle that
// got past it from looping.
const maxDepth = 64

// ancestry follows the queue tree upwards. It reads the queue informer's store, which is current
// before any of its handlers run.
type ancestry struct {
	queues cache.Indexer
}

// parent names the parent of queue, or "" for the root or a queue not known yet.
func (t ancestry) parent(name string) string {
	if name == schedulingv1beta1.RootQueue || t.queues == nil {
		return ""
	}
	obj, ok, err := t.queues.GetByKey(name)
	if err != nil || !ok {
		return ""
	}
	q, ok := obj.(*schedulingv1beta1.Queue)
	if !ok {
		return ""
	}
	return ParentOf(q)
}

// walk calls f once for queue and each of its ancestors, the root included; a chain that runs into
// a cycle stops before it repeats a queue, so no total counts a pod twice.
func (t ancestry) walk(queue string, f func(name string)) {
	var buf [maxDepth]string
	seen := buf[:0]
	for name := queue; name != "" && len(seen) < maxDepth && !slices.Contains(seen, name); name = t.parent(name) {
		seen = append(seen, name)
		f(name)
	}
}

// addSubtree adds (sign 1) or takes off (sign -1) requests from the running totals of queue and its
// ancestors. Call with u.mu held.
func (u *PodTable) addSubtree(queue string, requests v1.ResourceList, sign int) {
	u.tree.walk(queue, func(name string) {
		u.changed[name] = struct{}{}
		if sign > 0 {
			u.subtree[name] = quota.Add(u.subtree[name], requests)
			return
		}
		if left := quota.RemoveZeros(quota.SubtractWithNonNegativeResult(u.subtree[name], requests)); len(left) > 0 {
			u.subtree[name] = left
		} else {
			delete(u.subtree, name)
		}
	})
}

// rebuildSubtrees recounts the running totals from the queues' own allocations: the tree changed.
func (u *PodTable) rebuildSubtrees() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.subtree = map[string]v1.ResourceList{}
	// Counted as a change, in the same critical section: a snapshot built before holds the totals of
	// the tree as it was.
	u.allChanged = true
	u.numberChange(true)
	for name, q := range u.queues {
		if len(q.Allocated) > 0 {
			u.addSubtree(name, q.Allocated, 1)
		}
	}
}

// watchTree rebuilds the running totals when a queue is added, deleted or moved under another parent.
func (u *PodTable) watchTree(queues cache.SharedIndexInformer) error {
	u.tree = ancestry{queues: queues.GetIndexer()}
	_, err := queues.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { u.rebuildSubtrees() },
		UpdateFunc: func(oldObj, obj any) {
			old, okOld := oldObj.(*schedulingv1beta1.Queue)
			q, ok := obj.(*schedulingv1beta1.Queue)
			if !okOld || !ok || old.Spec.Parent != q.Spec.Parent {
				u.rebuildSubtrees()
			}
		},
		DeleteFunc: func(any) { u.rebuildSubtrees() },
	})
	return err
}

// subtreeAllocated is what a queue and the queues below it hold, kept current as pods come and go, so
// that a capability check costs the depth of the tree.
func (a *Accounting) subtreeAllocated(name string) v1.ResourceList {
	a.Pods.mu.RLock()
	defer a.Pods.mu.RUnlock()
	return a.Pods.subtree[name].DeepCopy()
}
