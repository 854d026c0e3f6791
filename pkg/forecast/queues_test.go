package forecast

import (
	"testing"

	quota "k8s.io/apiserver/pkg/quota/v1"

	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
)

// The totals a play keeps as work starts and leaves (each leaf's claim on idle room and each
// queue's subtree) are those computed afresh from what the queues hold and ask for.
func TestRecountedKeepsTheTotalsOfAFreshCount(t *testing.T) {
	queues := []Queue{{Name: "team", Parent: "root", Weight: 2}, queue("a", ""), queue("b", ""), queue("c", "4")}
	queues[1].Parent, queues[2].Parent = "team", "team"
	q := newQueues(snapshot([]Node{node("n0", 16, ""), node("n1", 16, "")}, queues))
	for _, name := range []string{"a", "b", "c"} {
		q.ask(name, cpu(8), 1)
	}
	snap := q.snapshot()
	steps := []struct {
		queue string
		v     Vector
		sign  int64
	}{{"a", cpu(3), 1}, {"c", cpu(4), 1}, {"b", cpu(9), 1}, {"a", cpu(3), -1}, {"c", cpu(2), -1}, {"b", cpu(9), -1}}
	for i, step := range steps {
		q.hold(step.queue, step.v, step.sign)
		q.ask(step.queue, step.v, -step.sign)
		snap = q.recounted(snap, step.queue)
		fresh := policy.Claimable(q.deserved, q.demands, q.allocated, q.leaves)
		if !quota.Equals(snap.Claimable, fresh) || quota.IsZero(fresh) {
			t.Errorf("step %d: claimable %v, want %v as counted afresh", i, snap.Claimable, fresh)
		}
		for name, qs := range q.byName {
			if got, want := snap.Queues[name].Subtree, q.list(below(qs)); !quota.Equals(got, want) {
				t.Errorf("step %d: subtree of %s %v, want %v", i, name, got, want)
			}
		}
	}
}

// below sums what qs and the queues below it hold, walking the tree.
func below(qs *queueState) Vector {
	out := qs.allocated.Clone()
	for _, c := range qs.children {
		out.Add(below(c), 1)
	}
	return out
}
