// Package accountingtest starts the shared accounting on fake clients, for the unit tests of the
// components that read it.
package accountingtest

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"

	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned/fake"
)

// Start starts an accounting on kube and on a fake client holding the queue-scheduler objects objs,
// until ctx ends, and returns it with its informer factory once the caches synced and the accounting
// heard of every object they started with.
func Start(ctx context.Context, t testing.TB, kube kubernetes.Interface, objs ...runtime.Object) (*accounting.Accounting, informers.SharedInformerFactory) {
	t.Helper()
	return StartWith(ctx, t, kube, accounting.Config{}, objs...)
}

// StartWith is Start with the accounting's configuration cfg (a fake clock, say).
func StartWith(ctx context.Context, t testing.TB, kube kubernetes.Interface, cfg accounting.Config, objs ...runtime.Object) (*accounting.Accounting, informers.SharedInformerFactory) {
	t.Helper()
	return StartOn(ctx, t, fake.NewSimpleClientset(objs...), kube, cfg)
}

// StartOn is Start on a client of queue-scheduler's objects the test holds (to change them, or to
// read what was written).
func StartOn(ctx context.Context, t testing.TB, queues versioned.Interface, kube kubernetes.Interface, cfg accounting.Config) (*accounting.Accounting, informers.SharedInformerFactory) {
	t.Helper()
	factory := informers.NewSharedInformerFactory(kube, 0)
	acct, err := accounting.Start(ctx, queues, factory, cfg)
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	// The informers' stores are synced; their handlers, which count the pods, nodes and queues for
	// the snapshots, may still be catching up.
	if err := wait.PollUntilContextTimeout(ctx, time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
		return acct.Synced(), nil
	}); err != nil {
		t.Fatal("the accounting never heard of every object the informers started with")
	}
	return acct, factory
}
