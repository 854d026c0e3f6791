package readmodel

import (
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/runtimes"
)

// learnerLocked is the learner of runtimes, made on first use, and resumed from the queues'
// checkpoints once the caches hold them; with learnMu held.
func (m *Model) learnerLocked() *runtimes.Learner {
	f := &m.forecast
	if f.learner == nil {
		f.learner = runtimes.NewLearner(runtimeHalfLife, runtimeMinWeight)
	}
	if !f.restored && m.acct.Synced() {
		f.since = map[string]time.Time{}
		for _, q := range m.acct.Store.AllQueues() {
			if cp := q.Status.Runtimes; cp != nil {
				f.learner.Import(q.Name, bucketsOf(cp), cp.Time.Time)
				f.since[q.Name] = cp.Time.Time
			}
		}
		f.restored = true
	}
	return f.learner
}

// RuntimesCheckpoint is what a queue's status says of the runtimes learned of its work: the
// checkpoint it holds while that is younger than interval (the queue's checkpoint interval), else
// what the learner holds now (to the second), none when it holds nothing. Until the learner resumed
// from the checkpoints, the checkpoint stays as it is. due is how long until the next one.
func (m *Model) RuntimesCheckpoint(q *schedulingv1beta1.Queue, interval time.Duration) (checkpoint *schedulingv1beta1.RuntimesCheckpoint, due time.Duration) {
	now := m.clock.Now().Truncate(time.Second)
	if prev := q.Status.Runtimes; prev != nil {
		if age := now.Sub(prev.Time.Time); age >= 0 && age < interval {
			return prev, interval - age
		}
	}
	f := &m.forecast
	f.learnMu.Lock()
	defer f.learnMu.Unlock()
	learner := m.learnerLocked()
	if !f.restored {
		return q.Status.Runtimes, time.Second
	}
	kinds := learner.Export(q.Name, now)
	if len(kinds) == 0 {
		return nil, 0
	}
	return checkpointOf(kinds, now), interval
}

// checkpointOf is the status form of what was learned of a queue's kinds at at, kinds and shapes by
// name and buckets in order; a bucket of less than a thousandth of a run is left out.
func checkpointOf(kinds map[string]runtimes.Learned, at time.Time) *schedulingv1beta1.RuntimesCheckpoint {
	cp := &schedulingv1beta1.RuntimesCheckpoint{Time: metav1.NewTime(at)}
	for kind, learned := range kinds {
		k := schedulingv1beta1.KindRuntimes{Kind: kind, Buckets: statusBuckets(learned.Buckets)}
		if len(k.Buckets) == 0 {
			continue
		}
		for shape, b := range learned.Shapes {
			if buckets := statusBuckets(b); len(buckets) > 0 {
				k.Shapes = append(k.Shapes, schedulingv1beta1.ShapeRuntimes{Shape: shape, Buckets: buckets})
			}
		}
		slices.SortFunc(k.Shapes, func(a, b schedulingv1beta1.ShapeRuntimes) int { return strings.Compare(a.Shape, b.Shape) })
		cp.Kinds = append(cp.Kinds, k)
	}
	slices.SortFunc(cp.Kinds, func(a, b schedulingv1beta1.KindRuntimes) int { return strings.Compare(a.Kind, b.Kind) })
	return cp
}

// statusBuckets are the buckets of b in order, those of less than a thousandth of a run left out.
func statusBuckets(b runtimes.Buckets) []schedulingv1beta1.RuntimeBucket {
	var out []schedulingv1beta1.RuntimeBucket
	for i, bucket := range b {
		if milli := int64(bucket.Runs*1000 + 0.5); milli > 0 {
			out = append(out, schedulingv1beta1.RuntimeBucket{Bucket: int32(i), MilliRuns: milli, MeanMilliseconds: bucket.Mean.Milliseconds()})
		}
	}
	slices.SortFunc(out, func(a, b schedulingv1beta1.RuntimeBucket) int { return int(a.Bucket - b.Bucket) })
	return out
}

// bucketsOf reads a checkpoint back into what the learner imports.
func bucketsOf(cp *schedulingv1beta1.RuntimesCheckpoint) map[string]runtimes.Learned {
	out := make(map[string]runtimes.Learned, len(cp.Kinds))
	for _, k := range cp.Kinds {
		learned := runtimes.Learned{Buckets: learnerBuckets(k.Buckets)}
		for _, shape := range k.Shapes {
			if learned.Shapes == nil {
				learned.Shapes = make(map[string]runtimes.Buckets, len(k.Shapes))
			}
			learned.Shapes[shape.Shape] = learnerBuckets(shape.Buckets)
		}
		out[k.Kind] = learned
	}
	return out
}

// learnerBuckets are status buckets as the learner reads them.
func learnerBuckets(status []schedulingv1beta1.RuntimeBucket) runtimes.Buckets {
	b := make(runtimes.Buckets, len(status))
	for _, bucket := range status {
		b[int(bucket.Bucket)] = runtimes.Bucket{Runs: float64(bucket.MilliRuns) / 1000, Mean: time.Duration(bucket.MeanMilliseconds) * time.Millisecond}
	}
	return b
}
