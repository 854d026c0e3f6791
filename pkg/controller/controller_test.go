package controller

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned/fake"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// The controller writes a queue's status once, and not again while nothing changed.
func TestStatusWrittenOnlyWhenChanged(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	queues := fake.NewSimpleClientset(util.MakeQueue("q").State(schedulingv1beta1.QueueStateClosed).Obj())
	kube := kubefake.NewClientset()
	factory := informers.NewSharedInformerFactory(kube, 0)
	acct, err := accounting.Start(ctx, queues, factory)
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	c, err := New(ctx, kube, dynamicfake.NewSimpleDynamicClient(runtime.NewScheme()), nil, acct, nil, StatusPacing{Interval: time.Second, PerSecond: 25})
	if err != nil {
		t.Fatal(err)
	}

	if err := c.syncQueue(ctx, "q"); err != nil {
		t.Fatal(err)
	}
	if got := statusWrites(queues); got != 1 {
		t.Fatalf("status writes after the first sync: got %d, want 1", got)
	}
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		q, ok := acct.Queue("q")
		return ok && q.Status.State == schedulingv1beta1.QueueStateClosed, nil
	})
	if err != nil {
		t.Fatal("the cache never saw the written status")
	}
	for range 3 {
		if err := c.syncQueue(ctx, "q"); err != nil {
			t.Fatal(err)
		}
	}
	if got := statusWrites(queues); got != 1 {
		t.Errorf("status writes after syncs with nothing changed: got %d, want still 1", got)
	}
	q, err := queues.SchedulingV1beta1().Queues().Get(ctx, "q", metav1.GetOptions{})
	if err != nil || q.Status.State != schedulingv1beta1.QueueStateClosed {
		t.Errorf("stored status: %+v, %v; want Closed", q.Status, err)
	}
}

func statusWrites(client *fake.Clientset) int {
	n := 0
	for _, a := range client.Actions() {
		if a.GetVerb() == "update" && a.GetSubresource() == "status" {
			n++
		}
	}
	return n
}

// A controller built but stopped leaves no goroutine behind once its context ends: a scheduler that
// shuts down, or a test that starts one per case, does not leak its event broadcaster.
func TestControllerLeavesNoGoroutineWhenStopped(t *testing.T) {
	before := goleak.IgnoreCurrent()
	ctx, cancel := context.WithCancel(context.Background())
	queues := fake.NewSimpleClientset()
	kube := kubefake.NewClientset()
	factory := informers.NewSharedInformerFactory(kube, 0)
	acct, err := accounting.Start(ctx, queues, factory)
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	if _, err := New(ctx, kube, dynamicfake.NewSimpleDynamicClient(runtime.NewScheme()), nil, acct, nil, StatusPacing{Interval: time.Second, PerSecond: 25}); err != nil {
		t.Fatal(err)
	}
	cancel()
	factory.Shutdown()
	goleak.VerifyNone(t, before)
}
