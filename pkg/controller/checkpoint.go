package controller

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/history"
)

// usageCheckpoint is what a queue's status says of its usage history: the checkpoint it holds
// while that is younger than the checkpoint interval, else the usage of its own pods now (to the
// second, as the status keeps time) with the effective weights of the last computation of the
// shares. A queue that used nothing has none; one the history has not counted yet keeps the one it
// has. due is how long until the next one.
func (c *Controller) usageCheckpoint(q *schedulingv1beta1.Queue) (checkpoint *schedulingv1beta1.UsageCheckpoint, due time.Duration) {
	now := c.clock.Now().Truncate(time.Second)
	if prev := q.Status.Usage; prev != nil {
		if age := now.Sub(prev.Time.Time); age >= 0 && age < c.checkpoints {
			return prev, c.checkpoints - age
		}
	}
	if !c.acct.UsageHistory().Keeps() {
		return nil, 0
	}
	used, ok := c.acct.OwnUsage(q.Name)
	switch {
	case !ok:
		// Not counted yet (the shares are computed at once after a start): the checkpoint stays,
		// the history resumes from it.
		return q.Status.Usage, time.Second
	case len(used.ResourceSeconds) == 0:
		return nil, 0
	}
	return &schedulingv1beta1.UsageCheckpoint{
		ResourceSeconds: history.Quantities(used.ResourceSeconds),
		EffectiveWeight: history.Quantities(c.acct.EffectiveWeights(q.Name)),
		Time:            metav1.NewTime(now),
	}, c.checkpoints
}
