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
func (a *Accounting) TreeFaultOf(q *schedulingv1beta1.Queue) TreeFault {
	return rules.TreeFaultOf(q, a)
}

// CycleAbove returns the cycle that queue's parent chain runs into in the queue informer's store.
func (a *Accounting) CycleAbove(queue string) []string { return rules.CycleAbove(queue, a) }

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
