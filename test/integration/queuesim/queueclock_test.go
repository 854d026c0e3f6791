package queuesim

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/queue-scheduler/queue-scheduler/pkg/localcluster"
)

// A local cluster given a clock for the scheduler's queue runs the queue on it, as queuesim does
// with its simulated clock: the queue's backoff flushes wait on that clock's timers.
func TestSchedulerQueueRunsOnTheClockGiven(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	queueClock := clocktesting.NewFakeClock(time.Now())
	cluster, err := localcluster.Start(ctx, localcluster.Options{Dir: t.TempDir(), QueueClock: queueClock})
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Stop()
	if err := wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(context.Context) (bool, error) {
		return queueClock.HasWaiters(), nil
	}); err != nil {
		t.Fatal("the scheduler's queue set no timer on the clock it was given")
	}
}
