package cycle

import (
	"testing"

	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
)

// The first plugin of a cycle that reads the snapshot takes it; every other one reads that value,
// and so does a clone of the state (a preemption dry run's).
func TestOneSnapshotACycle(t *testing.T) {
	state := framework.NewCycleState()
	if _, ok := Taken(state); ok {
		t.Fatal("a snapshot read from a cycle that took none")
	}
	taken := 0
	take := func() *policy.Snapshot { taken++; return &policy.Snapshot{Changes: uint64(taken)} }
	first := Snapshot(state, take)
	if again := Snapshot(state, take); again != first || taken != 1 {
		t.Errorf("second read: same %t, taken %d times", again == first, taken)
	}
	if read, ok := Taken(state); !ok || read != first {
		t.Errorf("Taken after the cycle took one: %t, same %t", ok, read == first)
	}
	if cloned := Snapshot(state.Clone(), take); cloned != first {
		t.Error("a clone of the state reads another snapshot")
	}
	if other := Snapshot(framework.NewCycleState(), take); other == first {
		t.Error("another cycle reads this cycle's snapshot")
	}
}

// The verdicts read back as written.
func TestVerdicts(t *testing.T) {
	state, group := framework.NewCycleState(), framework.NewCycleState()
	if _, ok := QueueVerdictOf(state); ok {
		t.Error("a verdict read from a state that has none")
	}
	SetQueueVerdict(state, QueueVerdict{Refused: true, Message: "full", Behind: true})
	if v, ok := QueueVerdictOf(state); !ok || v.Message != "full" || !v.Refused || !v.Behind {
		t.Errorf("the verdict read back: %+v, %t", v, ok)
	}
	if _, ok := ReclaimRefusal(state); ok {
		t.Error("a reclaim refusal read before one was written")
	}
	SetReclaimRefusal(group, "nothing to take")
	if why, ok := ReclaimRefusal(group); !ok || why != "nothing to take" {
		t.Errorf("reclaim refusal %q, %t", why, ok)
	}
}
