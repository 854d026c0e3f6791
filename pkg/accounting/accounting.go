// Package accounting is the one in-memory view of queues that every queue-scheduler plugin and the
// embedded controller of a process share. It is fed by informers and read without API calls, so a
// scheduling cycle never waits on the API server.
package accounting

import (
	"context"
	"fmt"
	"sync"
	"time"

	coreinformers "k8s.io/client-go/informers/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/informers/externalversions"
	schedulinginformers "github.com/queue-scheduler/queue-scheduler/pkg/generated/informers/externalversions/scheduling/v1beta1"
	listers "github.com/queue-scheduler/queue-scheduler/pkg/generated/listers/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/queueclient"
)

// syncTimeout bounds the wait for the queue-scheduler informers at start; past it the CRDs are most
// likely not installed.
const syncTimeout = 2 * time.Minute

// Accounting holds the shared view of one API server's queues and PodGroups.
type Accounting struct {
	queueInformer    schedulinginformers.QueueInformer
	podGroupInformer schedulinginformers.PodGroupInformer
	queues           listers.QueueLister
	podGroups        listers.PodGroupLister
	namespaces       corelisters.NamespaceLister
	namespacesSynced cache.InformerSynced
}

var (
	sharedMu sync.Mutex
	shared   = map[string]*Accounting{}
)

// ForHandle returns the process's accounting for the API server the scheduler talks to, creating and
// syncing it on first use. Every plugin of every profile gets the same one.
func ForHandle(ctx context.Context, h fwk.Handle) (*Accounting, error) {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	key := h.KubeConfig().Host
	if a, ok := shared[key]; ok {
		return a, nil
	}
	client, err := queueclient.New(h.KubeConfig())
	if err != nil {
		return nil, fmt.Errorf("queue-scheduler client: %w", err)
	}
	if err := EnsureDefaultQueue(ctx, client); err != nil {
		return nil, err
	}
	a, err := Start(ctx, client, h.SharedInformerFactory().Core().V1().Namespaces())
	if err != nil {
		return nil, err
	}
	shared[key] = a
	context.AfterFunc(ctx, func() { forget(key, a) })
	return a, nil
}

func forget(key string, a *Accounting) {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if shared[key] == a {
		delete(shared, key)
	}
}

// Start builds the informers on queue-scheduler's own resources and waits until they are synced.
// Namespaces come from the caller's informer, which the caller starts.
func Start(ctx context.Context, client versioned.Interface, namespaces coreinformers.NamespaceInformer) (*Accounting, error) {
	factory := externalversions.NewSharedInformerFactory(client, 0)
	a := &Accounting{
		queueInformer:    factory.Scheduling().V1beta1().Queues(),
		podGroupInformer: factory.Scheduling().V1beta1().PodGroups(),
		namespaces:       namespaces.Lister(),
		namespacesSynced: namespaces.Informer().HasSynced,
	}
	a.queues = a.queueInformer.Lister()
	a.podGroups = a.podGroupInformer.Lister()
	factory.Start(ctx.Done())

	syncCtx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	for typ, ok := range factory.WaitForCacheSync(syncCtx.Done()) {
		if !ok {
			return nil, fmt.Errorf("informer for %v did not sync within %s: are the queue-scheduler CRDs installed?", typ, syncTimeout)
		}
	}
	klog.FromContext(ctx).V(2).Info("Queue accounting synced")
	return a, nil
}

// QueueInformer is the shared informer on queues, for plugins that react to queue changes.
func (a *Accounting) QueueInformer() cache.SharedIndexInformer { return a.queueInformer.Informer() }

// PodGroupInformer is the shared informer on PodGroups.
func (a *Accounting) PodGroupInformer() cache.SharedIndexInformer {
	return a.podGroupInformer.Informer()
}

// NamespacesSynced reports whether namespaces, and so their queue annotations, are known yet.
func (a *Accounting) NamespacesSynced() bool { return a.namespacesSynced() }
