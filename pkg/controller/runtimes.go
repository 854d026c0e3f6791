package controller

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
func (c *Controller) learnerLocked() *runtimes.Learner {
	f := &c.forecast
	if f.learner == nil {
		f.learner = runtimes.NewLearner(runtimeHalfLife, runtimeMinWeight)
	}
	if !f.restored && c.acct.Synced() {
		f.since = map[string]time.Time{}
		for _, q := range c.acct.AllQueues() {
			if cp := q.Status.Runtimes; cp != nil {
				f.learner.Import(q.Name, bucketsOf(cp), cp.Time.Time)
				f.since[q.Name] = cp.Time.Time
			}
		}
		f.restored = true
	}
	return f.learner
}

// runtimesCheckpoint is what a queue's status says of the runtimes learned of its work: the
// checkpoint it holds while that is younger than the queue's checkpoint interval, else what the
// learner holds now (to the second), none when it holds nothing. Until the learner resumed from
// the checkpoints, the checkpoint stays as it is. due is how long until the next one.
func (c *Controller) runtimesCheckpoint(q *schedulingv1beta1.Queue) (checkpoint *schedulingv1beta1.RuntimesCheckpoint, due time.Duration) {
	now := c.clock.Now().Truncate(time.Second)
	interval := c.checkpointInterval(q.Name)
	if prev := q.Status.Runtimes; prev != nil {
		if age := now.Sub(prev.Time.Time); age >= 0 && age < interval {
			return prev, interval - age
		}
	}
	f := &c.forecast
	f.learnMu.Lock()
	defer f.learnMu.Unlock()
	learner := c.learnerLocked()
	if !f.restored {
		return q.Status.Runtimes, time.Second
	}
	kinds := learner.Export(q.Name, now)
	if len(kinds) == 0 {
		return nil, 0
	}
	return checkpointOf(kinds, now), interval
}

// checkpointOf is the status form of what was learned of a queue's kinds at at, kinds by name and
// buckets in order; a bucket of less than a thousandth of a run is left out.
func checkpointOf(kinds map[string]runtimes.Buckets, at time.Time) *schedulingv1beta1.RuntimesCheckpoint {
	cp := &schedulingv1beta1.RuntimesCheckpoint{Time: metav1.NewTime(at)}
	for kind, b := range kinds {
		k := schedulingv1beta1.KindRuntimes{Kind: kind}
		for i, w := range b {
			if milli := int64(w*1000 + 0.5); milli > 0 {
				k.Buckets = append(k.Buckets, schedulingv1beta1.RuntimeBucket{Bucket: int32(i), MilliRuns: milli})
			}
		}
		if len(k.Buckets) == 0 {
			continue
		}
		slices.SortFunc(k.Buckets, func(a, b schedulingv1beta1.RuntimeBucket) int { return int(a.Bucket - b.Bucket) })
		cp.Kinds = append(cp.Kinds, k)
	}
	slices.SortFunc(cp.Kinds, func(a, b schedulingv1beta1.KindRuntimes) int { return strings.Compare(a.Kind, b.Kind) })
	return cp
}

// bucketsOf reads a checkpoint back into what the learner imports.
func bucketsOf(cp *schedulingv1beta1.RuntimesCheckpoint) map[string]runtimes.Buckets {
	out := make(map[string]runtimes.Buckets, len(cp.Kinds))
	for _, k := range cp.Kinds {
		b := runtimes.Buckets{}
		for _, bucket := range k.Buckets {
			b[int(bucket.Bucket)] = float64(bucket.MilliRuns) / 1000
		}
		out[k.Kind] = b
	}
	return out
}
