package holdreport

import (
	"fmt"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
)

// QueueHold says why a queue holds back all of its work, or nothing when it does not: q is the
// queue named name (nil when it does not exist), state the state it schedules in, and fault why its
// place in the tree is not known, when it is Unknown.
func QueueHold(name string, q *schedulingv1beta1.Queue, state schedulingv1beta1.QueueState, fault string) Why {
	switch {
	case name == schedulingv1beta1.RootQueue:
		return Why{Reason: QueueMissing, Message: fmt.Sprintf("queue %q is the root of the queue hierarchy: it takes no work", name)}
	case q == nil:
		return Why{Reason: QueueMissing, Message: fmt.Sprintf("queue %q does not exist", name)}
	}
	switch state {
	case schedulingv1beta1.QueueStateSuspended:
		return Why{Reason: QueueSuspended, Message: policy.SuspendedMessage(name)}
	case schedulingv1beta1.QueueStateUnknown:
		return Why{Reason: QueueUnknown, Message: fmt.Sprintf("queue %q is Unknown: %s", name, fault)}
	default:
		return Why{}
	}
}
