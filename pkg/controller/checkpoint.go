package controller

import (
	"hash/fnv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/history"
)

// usageCheckpoint is what a queue's status says of its usage history: the checkpoint it holds
// while that is younger than the queue's checkpoint interval, else the usage of its own pods at the
// start of this second (the status keeps time to the second: taken back to it as if what the queue
// holds had been held since, so that a restore, which counts it so, counts no time twice) with the
// effective weights of the last computation of the shares. A queue that used nothing has none. One the history has not counted yet, or a scheduler
// that keeps no history (turned off, or an older one during an upgrade), leaves the checkpoint as
// it is. due is how long until the next one.
func (c *Controller) usageCheckpoint(q *schedulingv1beta1.Queue) (checkpoint *schedulingv1beta1.UsageCheckpoint, due time.Duration) {
	now := c.clock.Now().Truncate(time.Second)
	interval := c.checkpointInterval(q.Name)
	if prev := q.Status.Usage; prev != nil {
		if age := now.Sub(prev.Time.Time); age >= 0 && age < interval {
			return prev, interval - age
		}
	}
	if !c.acct.History.Settings().Keeps() {
		return q.Status.Usage, 0
	}
	used, ok := c.acct.History.Own(q.Name, now)
	switch {
	case !ok:
		// Not counted yet (the history starts once the pods are): the checkpoint stays, the
		// history resumes from it.
		return q.Status.Usage, time.Second
	case len(used.ResourceSeconds) == 0:
		return nil, 0
	}
	return &schedulingv1beta1.UsageCheckpoint{
		ResourceSeconds: history.Quantities(used.ResourceSeconds),
		EffectiveWeight: history.Quantities(c.acct.EffectiveWeights(q.Name)),
		Time:            metav1.NewTime(now),
	}, interval
}

// checkpointInterval is the checkpoint interval of one queue: the configured one, up to a tenth
// longer by the queue's name, so that queues checkpointed together (after a leader starts, say)
// drift apart instead of writing together ever after.
func (c *Controller) checkpointInterval(queue string) time.Duration {
	h := fnv.New32a()
	_, _ = h.Write([]byte(queue))
	return c.checkpoints + time.Duration(uint64(c.checkpoints/10)*uint64(h.Sum32()%1000)/1000)
}
