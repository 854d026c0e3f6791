package controller

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned/fake"
	"github.com/queue-scheduler/queue-scheduler/pkg/history"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// A queue's usage is checkpointed when its last checkpoint is older than the interval, from the
// history resumed from that checkpoint; a younger one is kept, and a queue that used nothing has none.
func TestUsageCheckpoint(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	now := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	clk := testingclock.NewFakeClock(now)
	queues := fake.NewSimpleClientset(util.MakeQueue("root").Obj(), util.MakeQueue("idle").Obj(),
		util.MakeQueue("used").Used(map[v1.ResourceName]string{v1.ResourceCPU: "7200"}, now.Add(-time.Hour)).Obj())
	factory := informers.NewSharedInformerFactory(kubefake.NewClientset(), 0)
	acct, err := accounting.Start(ctx, queues, factory, accounting.Config{Clock: clk, History: history.Settings{HalfLife: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	// The history starts once the accounting is synced, at the computation of the shares after; the
	// fake clock lets the computations' spacing pass, from then on only: stepped while the informers
	// still catch up, it could run out of its second before the history starts.
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		if !acct.Synced() {
			return false, nil
		}
		_, ok := acct.History.Own("used", clk.Now())
		if !ok && clk.Since(now) < 900*time.Millisecond {
			clk.Step(100 * time.Millisecond)
		}
		return ok, nil
	})
	if err != nil {
		t.Fatal("the history never counted the queue")
	}
	c := &Controller{acct: acct, clock: clk, checkpoints: 5 * time.Minute}
	interval := c.checkpointInterval("used")
	if interval < 5*time.Minute || interval > 5*time.Minute+30*time.Second {
		t.Errorf("used's checkpoint interval is %s, want 5m and up to a tenth more", interval)
	}
	used, _ := acct.Store.Queue("used")
	// Stamped at the start of the second, with the usage then.
	stamp := clk.Now().Truncate(time.Second)
	checkpoint, due := c.usageCheckpoint(used)
	if checkpoint == nil || !checkpoint.Time.Time.Equal(stamp) || checkpoint.ResourceSeconds.Cpu().Value() != 3600 || due != interval {
		t.Fatalf("an hour-old checkpoint of 7200 cpu-seconds, half-life one hour: got %+v due in %s; want 3600 at %s, next in %s", checkpoint, due, stamp, interval)
	}
	clk.Step(2 * time.Minute)
	fresh := used.DeepCopy()
	fresh.Status.Usage = checkpoint
	age := clk.Now().Truncate(time.Second).Sub(stamp)
	if kept, due := c.usageCheckpoint(fresh); kept != checkpoint || due != interval-age {
		t.Errorf("a checkpoint %s old was replaced (%+v) or comes due in %s, want kept for %s", age, kept, due, interval-age)
	}
	idle, _ := acct.Store.Queue("idle")
	if got, _ := c.usageCheckpoint(idle); got != nil {
		t.Errorf("a queue that used nothing got a checkpoint: %+v", got)
	}
}
