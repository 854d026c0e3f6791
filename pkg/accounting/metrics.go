package accounting

import (
	"context"

	"k8s.io/apimachinery/pkg/labels"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/metrics"
)

// serveMetrics makes this accounting the source of the per-queue gauges until ctx ends.
func (a *Accounting) serveMetrics(ctx context.Context) {
	unset := metrics.SetQueueSource(a.queueSnapshots)
	go func() {
		<-ctx.Done()
		unset()
	}()
}

// queueSnapshots reads, at scrape time, what the per-queue gauges report: the accounting's usage and
// shares, the queue's spec and status state, and its PodGroups and QueueUnits by phase.
func (a *Accounting) queueSnapshots() []metrics.QueueSnapshot {
	queues, err := a.Store.queues.List(labels.Everything())
	if err != nil {
		return nil
	}
	out := make([]metrics.QueueSnapshot, 0, len(queues))
	for _, q := range queues {
		out = append(out, a.queueSnapshot(q))
	}
	return out
}

func (a *Accounting) queueSnapshot(q *schedulingv1beta1.Queue) metrics.QueueSnapshot {
	usage := a.Pods.Usage(q.Name)
	state := q.Status.State
	if state == "" {
		state = a.Store.SchedulingState(q)
	}
	s := metrics.QueueSnapshot{
		Name: q.Name, State: string(state), Weight: q.Spec.Weight,
		Allocated: usage.Allocated, Pending: usage.Pending, Deserved: a.Deserved(q.Name),
		Capability: q.Spec.Capability, Guarantee: q.Spec.Guarantee.Resource,
		PendingPods: usage.Pods - usage.Bound, RunningPods: usage.Bound,
		PodGroups: map[string]int{}, QueueUnits: map[string]int{}, EffectiveWeights: a.EffectiveWeights(q.Name),
	}
	if used, ok := a.History.Remembered(q.Name); ok {
		s.Usage = used.ResourceSeconds
	}
	for _, pg := range a.Store.PodGroupsOf(q.Name) {
		phase := pg.Status.Phase
		if phase == "" {
			phase = schedulingv1beta1.PodGroupPending
		}
		s.PodGroups[string(phase)]++
	}
	for _, u := range a.Store.QueueUnitsOf(q.Name) {
		if u.Dequeued() {
			s.QueueUnits["Dequeued"]++
		} else {
			s.QueueUnits["Enqueued"]++
		}
	}
	return s
}
