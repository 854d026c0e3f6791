package integration

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"

	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/controller"
	"github.com/queue-scheduler/queue-scheduler/pkg/readmodel"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// startController runs one more controller replica on its own caches, campaigning for lease.
func startController(t *testing.T, ctx context.Context, identity string) *controller.Controller {
	t.Helper()
	kube := informers.NewSharedInformerFactory(cluster.Kube, 0)
	acct, err := accounting.Start(ctx, cluster.Queues, kube, accounting.Config{})
	if err != nil {
		t.Fatal(err)
	}
	kube.Start(ctx.Done())
	c, err := controller.New(ctx, cluster.Kube, dynamic.NewForConfigOrDie(cluster.Config), nil, acct, nil, controller.StatusPacing{Interval: time.Second, PerSecond: 25}, readmodel.ForecastSettings{})
	if err != nil {
		t.Fatal(err)
	}
	le := controller.LeaderElection{
		Namespace: "kube-system", Name: "handover-test", Identity: identity,
		LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 250 * time.Millisecond,
	}
	go func() { _ = c.Run(ctx, le) }()
	return c
}

// Two replicas: exactly one leads at a time, and the other takes over when the leader goes away.
func TestLeaderHandOver(t *testing.T) {
	ctxA, stopA := context.WithCancel(context.Background())
	ctxB, stopB := context.WithCancel(context.Background())
	defer stopA()
	defer stopB()
	a, b := startController(t, ctxA, "replica-a"), startController(t, ctxB, "replica-b")

	leader, follower, stopLeader := a, b, stopA
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(context.Context) (bool, error) {
		if a.Leading() && b.Leading() {
			t.Fatal("both replicas lead")
		}
		if b.Leading() {
			leader, follower, stopLeader = b, a, stopB
		}
		return leader.Leading(), nil
	})
	if err != nil {
		t.Fatalf("no replica leads within %s", settle)
	}
	stopLeader()
	err = wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(context.Context) (bool, error) {
		return follower.Leading() && !leader.Leading(), nil
	})
	if err != nil {
		t.Fatalf("the follower did not take over within %s", settle)
	}
	// The new leader does the work: a queue created now is synced by it.
	before := follower.Synced()
	createQueue(t, util.MakeQueue("after-hand-over").Obj())
	waitStatusState(t, "after-hand-over", "Open")
	err = wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(context.Context) (bool, error) {
		return follower.Synced() > before, nil
	})
	if err != nil {
		t.Fatalf("the new leader synced nothing within %s", settle)
	}
}
