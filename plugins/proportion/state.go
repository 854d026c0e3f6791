package proportion

import (
	"fmt"
	"maps"

	fwk "k8s.io/kube-scheduler/framework"

	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
)

// stateKey is where PreFilter leaves its verdict in the cycle state.
const stateKey fwk.StateKey = Name

// cycleState is PreFilter's verdict on a pod, and what a preemption dry run frees of its queue.
type cycleState struct {
	queue   string
	refusal *policy.Refusal
	// headroom is what the queue must free for a refused pod to pass.
	headroom policy.Headroom
	// freed is what the queue's pods taken off nodes in a dry run hold, less those put back.
	freed policy.Amounts
}

// Clone copies the state; a dry run works on copies, one per node.
func (s *cycleState) Clone() fwk.StateData {
	c := *s
	c.freed = maps.Clone(s.freed)
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
