package proportion

import (
	"fmt"
	"maps"

	fwk "k8s.io/kube-scheduler/framework"

	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
)

// stateKey is where PreFilter leaves its verdict in the cycle state.
const stateKey fwk.StateKey = Name

// cycleState is PreFilter's verdict on a pod, and what a preemption dry run frees of its queue.
type cycleState struct {
	queue   string
	refusal *accounting.Refusal
	// headroom is what the queue must free for a refused pod to pass.
	headroom accounting.Headroom
	// freed is what the queue's pods taken off nodes in a dry run hold, less those put back.
	freed accounting.Amounts
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

// WaitsForShares says whether Proportion turned the pod away in this cycle only because the shares
// were being recomputed: the pod comes back as soon as they are fresh. Other plugins read the verdict
// here, typed, rather than from the message.
func WaitsForShares(state fwk.CycleState) bool {
	s, err := readState(state)
	return err == nil && s.refusal != nil && s.refusal.WaitsForShares
}

// groupWaitsKey marks, in kube-scheduler's pod-group cycle, a group of which Proportion turned a
// member away only because the shares were being recomputed.
const groupWaitsKey fwk.StateKey = Name + "/group-waits-for-shares"

type groupWaits struct{}

func (groupWaits) Clone() fwk.StateData { return groupWaits{} }

// MarkGroupWaitsForShares marks, in kube-scheduler's pod-group cycle, the group of the cycle's pod,
// which was turned away only for the shares; outside that cycle it does nothing.
func MarkGroupWaitsForShares(state fwk.CycleState) {
	if state.IsPodGroupSchedulingCycle() {
		state.GetPodGroupSchedulingCycle().Write(groupWaitsKey, groupWaits{})
	}
}

// GroupWaitsForShares is WaitsForShares for the pod group of a pod-group cycle: some member was
// turned away only for the shares, and comes back as soon as they are fresh.
func GroupWaitsForShares(state fwk.PodGroupCycleState) bool {
	_, err := state.Read(groupWaitsKey)
	return err == nil
}
