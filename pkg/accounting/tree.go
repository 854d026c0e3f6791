package accounting

import (
	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/rules"
)

// TreeFault is why a queue's place in the tree cannot be determined (package rules owns the rule).
type TreeFault = rules.TreeFault

// Reasons of a TreeFault, also the reasons of the queue's Active condition.
const (
	ParentMissing = rules.ParentMissing
	ParentCycle   = rules.ParentCycle
)

// TreeFaultOf reports a queue whose parent does not exist, or whose parent chain runs into a cycle,
// in the queue informer's store.
func (s *Store) TreeFaultOf(q *schedulingv1beta1.Queue) TreeFault {
	return rules.TreeFaultOf(q, s)
}

// CycleAbove returns the cycle that queue's parent chain runs into in the queue informer's store.
func (s *Store) CycleAbove(queue string) []string { return rules.CycleAbove(queue, s) }

// TreeOf names every queue of the tree queue belongs to: its top-level ancestor (the one below the
// root) and every queue below that one, once each, as the queue informer's store has them. Work a
// queue admits reserves room against every capability on its path, which the pods and work of any
// queue of that tree count; with a capability on the root, every queue is of one tree. A parent
// chain that runs into a cycle or a missing parent ends the climb at the last queue that exists.
func (s *Store) TreeOf(queue string) []string {
	if root, ok := s.Queue(schedulingv1beta1.RootQueue); ok && len(root.Spec.Capability) > 0 {
		// The root's capability counts every queue's reservations: every tree is one.
		return s.QueueNames()
	}
	top, seen := queue, map[string]bool{queue: true}
	for {
		q, ok := s.Queue(top)
		if !ok {
			break
		}
		parent := ParentOf(q)
		if _, exists := s.Queue(parent); !exists || parent == schedulingv1beta1.RootQueue || seen[parent] {
			break
		}
		top, seen[parent] = parent, true
	}
	return s.Subtree(top)
}

// Subtree names queue and every queue below it, once each, as the queue informer's store has them
// (a cycle in the parent chains ends the walk).
func (s *Store) Subtree(queue string) []string {
	tree, seen := []string{queue}, map[string]bool{queue: true}
	for i := 0; i < len(tree); i++ {
		for _, child := range s.Children(tree[i]) {
			if !seen[child.Name] {
				seen[child.Name] = true
				tree = append(tree, child.Name)
			}
		}
	}
	return tree
}

// queueSpecsVersion changes whenever a queue's spec does, or a queue comes or goes: it sums a mark
// of each queue's UID and generation in the informer's store. A queue deleted and another created
// at the same generation change it too. It is read when the share tree is built, before the queues
// are, and a snapshot carries it as QueueSpecs: a decision made on one snapshot (a gang denied for
// lack of room) is stale on a later one with other specs.
func (a *Accounting) queueSpecsVersion() int64 {
	var sum uint64
	for _, q := range a.Store.AllQueues() {
		sum += specMark(string(q.UID), q.Generation)
	}
	return int64(sum)
}

// specMark is the FNV-1a hash of a queue's UID and generation.
func specMark(uid string, generation int64) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for i := 0; i < len(uid); i++ {
		h = (h ^ uint64(uid[i])) * prime
	}
	for i := range 8 {
		h = (h ^ uint64(byte(generation>>(8*i)))) * prime
	}
	return h
}
