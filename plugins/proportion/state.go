package proportion

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
)

// stateKey is where PreFilter leaves its verdict in the cycle state.
const stateKey fwk.StateKey = Name

// cycleState is PreFilter's verdict on a pod, and what a preemption dry run frees of its queue.
type cycleState struct {
	queue   string
	req     v1.ResourceList
	refusal *accounting.Refusal
	// freed is what the queue's pods taken off nodes in a dry run hold, less those put back.
	freed v1.ResourceList
}

// Clone copies the state; a dry run works on copies, one per node.
func (s *cycleState) Clone() fwk.StateData {
	c := *s
	c.freed = s.freed.DeepCopy()
	return &c
}

func readState(state fwk.CycleState) (*cycleState, error) {
	data, err := state.Read(stateKey)
	if err != nil {
		return nil, fmt.Errorf("reading %q from the cycle state: %w", stateKey, err)
	}
	s, ok := data.(*cycleState)
	if !ok {
		return nil, fmt.Errorf("%q in the cycle state is a %T", stateKey, data)
	}
	return s, nil
}

// positive keeps the quantities above zero.
func positive(list v1.ResourceList) v1.ResourceList {
	out := v1.ResourceList{}
	for name, q := range list {
		if q.Sign() > 0 {
			out[name] = q
		}
	}
	return out
}
