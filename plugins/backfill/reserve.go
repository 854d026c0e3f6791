package backfill

import (
	"context"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/queue-scheduler/queue-scheduler/pkg/metrics"
)

// Reserve counts the pod against the guards of its node, so that the next pods see what it took
// before the plan is made again; it notes whether the pod was backfilled.
func (b *Backfill) Reserve(_ context.Context, state fwk.CycleState, _ *v1.Pod, node string) *fwk.Status {
	s, ok := readState(state)
	if !ok {
		return nil // PreFilter found no reservation: there is nothing to count.
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	plan := b.plans.Latest()
	s.backfilled = plan.Backfills(node, s.pod)
	plan.Take(node, s.pod, 1)
	return nil
}

// Unreserve gives back what Reserve counted, to the plan in force: a plan made after Reserve
// counted the pod too, from the cycle's snapshot.
func (b *Backfill) Unreserve(_ context.Context, state fwk.CycleState, _ *v1.Pod, node string) {
	s, ok := readState(state)
	if !ok {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.plans.Latest().Take(node, s.pod, -1)
	s.backfilled = false
}

// PostBind counts a backfilled pod once it is bound.
func (b *Backfill) PostBind(_ context.Context, state fwk.CycleState, pod *v1.Pod, _ string) {
	if s, ok := readState(state); ok && s.backfilled {
		queue, _ := b.acct.QueueOf(pod)
		metrics.BackfilledPods.WithLabelValues(queue).Inc()
	}
}

// EventsToRegister lists the cluster events that can let a pod in that Filter turned away: room
// freed on a node, or a node added or grown. A reservation dropped, moved or shrunk moves the pods
// back itself (see New).
func (b *Backfill) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: fwk.AssignedPod, ActionType: fwk.Delete}},
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeAllocatable}},
	}, nil
}
