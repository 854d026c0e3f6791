// Package accountingtest starts the shared accounting on fake clients, for the unit tests of the
// components that read it.
package accountingtest

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"

	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned/fake"
)

// Start starts an accounting on kube and on a fake client holding the queue-scheduler objects objs,
// until ctx ends, and returns it with its informer factory once the caches synced.
func Start(ctx context.Context, t testing.TB, kube kubernetes.Interface, objs ...runtime.Object) (*accounting.Accounting, informers.SharedInformerFactory) {
	t.Helper()
	return StartWith(ctx, t, kube, accounting.Config{}, objs...)
}

// StartWith is Start with the accounting's configuration cfg (a fake clock, say).
func StartWith(ctx context.Context, t testing.TB, kube kubernetes.Interface, cfg accounting.Config, objs ...runtime.Object) (*accounting.Accounting, informers.SharedInformerFactory) {
	t.Helper()
	factory := informers.NewSharedInformerFactory(kube, 0)
	acct, err := accounting.Start(ctx, fake.NewSimpleClientset(objs...), factory, cfg)
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return acct, factory
}
