package accounting

import (
	"fmt"
	"slices"
	"strings"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

// TreeFault is why a queue's place in the tree, and so its state, cannot be determined; the zero
// value means none.
type TreeFault struct {
	// Reason is ParentMissing or ParentCycle.
	Reason string
	// Detail says what is wrong, e.g. `its parent queue "org" does not exist`.
	Detail string
}

// Reasons of a TreeFault, also the reasons of the queue's Active condition.
const (
	ParentMissing = "ParentMissing"
	ParentCycle   = "ParentCycle"
)

// TreeFaultOf reports a queue whose parent does not exist, or whose parent chain runs into a cycle
// (two re-parentings at once can store one).
func (a *Accounting) TreeFaultOf(q *schedulingv1beta1.Queue) TreeFault {
	switch {
	case q.Spec.Parent == "":
		return TreeFault{}
	case !a.exists(q.Spec.Parent):
		return TreeFault{Reason: ParentMissing, Detail: fmt.Sprintf("its parent queue %q does not exist", q.Spec.Parent)}
	}
	if cycle := a.CycleAbove(q.Name); cycle != nil {
		return TreeFault{Reason: ParentCycle, Detail: "its parent chain is a cycle: " + strings.Join(cycle, " -> ")}
	}
	return TreeFault{}
}

// CycleAbove returns the cycle that queue's parent chain runs into, closed (a -> b -> a), or nil when
// the chain ends at the root or at a missing queue.
func (a *Accounting) CycleAbove(queue string) []string {
	chain := []string{queue}
	for name := queue; ; {
		q, ok := a.Queue(name)
		if !ok || q.Spec.Parent == "" || q.Spec.Parent == schedulingv1beta1.RootQueue {
			return nil
		}
		name = q.Spec.Parent
		if i := slices.Index(chain, name); i >= 0 {
			return append(chain[i:], name)
		}
		chain = append(chain, name)
	}
}

// QueueSpecsVersion changes whenever a queue's spec does, or a queue comes or goes: it is the sum of
// the queues' generations in the informer's store, which is current before any handler hears of the
// change. A decision made under one version (a gang denied for lack of room) is stale under another.
func (a *Accounting) QueueSpecsVersion() int64 {
	var sum int64
	for _, q := range a.AllQueues() {
		sum += q.Generation
	}
	return sum
}
