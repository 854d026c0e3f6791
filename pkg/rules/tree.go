package rules

import (
	"fmt"
	"slices"
	"strings"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

// Queues finds queues by name: the scheduler's caches, or a snapshot read from the API server.
type Queues interface {
	Queue(name string) (*schedulingv1beta1.Queue, bool)
}

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
// (two re-parentings at once can store one): the one rule the webhook, the scheduler and the
// controller apply.
func TreeFaultOf(q *schedulingv1beta1.Queue, queues Queues) TreeFault {
	if q.Spec.Parent == "" {
		return TreeFault{}
	}
	if _, ok := queues.Queue(q.Spec.Parent); !ok {
		return TreeFault{Reason: ParentMissing, Detail: fmt.Sprintf("its parent queue %q does not exist", q.Spec.Parent)}
	}
	if cycle := CycleAbove(q.Name, queues); cycle != nil {
		return TreeFault{Reason: ParentCycle, Detail: "its parent chain is a cycle: " + strings.Join(cycle, " -> ")}
	}
	return TreeFault{}
}

// CycleAbove returns the cycle that queue's parent chain runs into, closed (a -> b -> a), or nil when
// the chain ends at the root or at a missing queue.
func CycleAbove(queue string, queues Queues) []string {
	chain := []string{queue}
	for name := queue; ; {
		q, ok := queues.Queue(name)
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
