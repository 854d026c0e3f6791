// Package accounting is the one in-memory view of queues that every queue-scheduler plugin, the
// embedded controller and the webhook of a scheduler share; the composition root (pkg/scheduler)
// builds it once per scheduler and hands it to each. It is fed by informers and read without API
// calls, so a scheduling cycle never waits on the API server.
package accounting

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/informers/externalversions"
	"github.com/queue-scheduler/queue-scheduler/pkg/history"
)

// syncTimeout bounds the wait for the queue-scheduler informers at start; past it the CRDs are most
// likely not installed.
const syncTimeout = 2 * time.Minute

// Accounting holds the shared view of one API server's queues, PodGroups, QueueUnits, Commands and
// the pods of queue-scheduler.
type Accounting struct {
	// Client reaches the queue-scheduler API.
	Client versioned.Interface
	// Informers is the process's one informer factory on the queue-scheduler API.
	Informers externalversions.SharedInformerFactory
	// Events tells what changed in the queue layer to whoever subscribed.
	Events *Events
	// Store is the informer-fed view of the queues, namespaces, PodGroups, QueueUnits and Commands.
	Store *Store
	// Gangs says which gang a pod belongs to, and finds a gang's PodGroup and members.
	Gangs *Gangs
	// History remembers what each queue used: its decayed usage.
	History *Ledger
	// StartPlans is the waiting gangs' reservations, as Backfill last planned them.
	StartPlans *StartPlans

	handlersSynced []cache.InformerSynced
	// podsSynced: the usage has counted every pod the informer started with.
	podsSynced cache.InformerSynced
	// Pods is the table of queue-scheduler's pods: each one's queue, requests and whether it holds room.
	Pods      *PodTable
	shares    *shares
	snapshots snapshots
	// nodes lists the nodes the capacity is counted from.
	nodes        corelisters.NodeLister
	reservations reservations
	// gangFits keeps each gang's GangNeverFits verdict while what it rests on stays.
	gangFits gangFits
	// clock tells the time to the accounting and to whoever it is handed to (Clock).
	clock clock.WithTickerAndDelayedExecution
}

// Config is what the composition root chooses for an accounting.
type Config struct {
	// Takes says which other gang APIs' PodGroups queue-scheduler takes (QueueState's gangSources);
	// nil takes them all.
	Takes func(schedulingv1beta1.GangSource) bool
	// Clock tells the time to the accounting and the plugins and controller built on it; nil is the
	// real clock.
	Clock clock.WithTickerAndDelayedExecution
	// History says how the queues' usage is remembered and how strongly it moves the shares; the
	// zero value keeps none.
	History history.Settings
}

// Clock is the time every part built on the accounting reads: the plugins' waits and denials, the
// controller's pacing and grace periods, the shares' spacing.
func (a *Accounting) Clock() clock.WithTickerAndDelayedExecution { return a.clock }

// Start builds the informers on queue-scheduler's own resources and waits until they are synced.
// Namespaces and pods come from kube, the caller's informer factory, which the caller starts.
func Start(ctx context.Context, client versioned.Interface, kube informers.SharedInformerFactory, cfg Config) (*Accounting, error) {
	takes, clk := cfg.Takes, cfg.Clock
	if takes == nil {
		takes = func(schedulingv1beta1.GangSource) bool { return true }
	}
	if clk == nil {
		clk = clock.RealClock{}
	}
	factory := externalversions.NewSharedInformerFactoryWithOptions(client, 0, externalversions.WithTransform(WithoutManagedFields))
	v1beta1 := factory.Scheduling().V1beta1()
	events := &Events{}
	a := &Accounting{
		Client:       client,
		Informers:    factory,
		Events:       events,
		StartPlans:   NewStartPlans(events),
		Store:        newStore(factory, kube),
		Gangs:        &Gangs{takesGangsOf: takes, podGroups: v1beta1.PodGroups().Lister()},
		clock:        clk,
		reservations: reservations{admitted: map[WorkKey]v1.ResourceList{}},
	}
	a.History = &Ledger{settings: cfg.History, clock: clk, store: a.Store, bringUpToNow: func() { a.Snapshot() }}
	if err := a.addIndexers(); err != nil {
		return nil, err
	}
	a.shares = newShares()
	a.Pods = newPodTable(a, a.shares.numberedChange)
	if err := a.gangIndex(kube.Core().V1().Pods().Informer()); err != nil {
		return nil, err
	}
	podsCounted, err := a.Pods.watch(ctx, kube.Core().V1().Pods().Informer(), v1beta1.PodGroups().Informer(), a.Store.namespacesSynced)
	if err != nil {
		return nil, err
	}
	if err := a.Pods.watchTree(v1beta1.Queues().Informer()); err != nil {
		return nil, err
	}
	if err := a.Store.selectors.watch(v1beta1.Queues().Informer()); err != nil {
		return nil, err
	}
	a.nodes = kube.Core().V1().Nodes().Lister()
	nodesSynced, err := a.shares.capacityOf.watch(kube.Core().V1().Nodes().Informer())
	if err != nil {
		return nil, err
	}
	queuesSynced, err := a.shares.dirtyOnChange(v1beta1.Queues().Informer(), v1beta1.QueueUnits().Informer(), v1beta1.PodGroups().Informer())
	if err != nil {
		return nil, err
	}
	a.handlersSynced = append([]cache.InformerSynced{nodesSynced}, queuesSynced...)
	a.podsSynced = podsCounted
	a.snapshots.told = newNotices()
	go a.runShares(ctx)
	go a.tell(ctx)
	factory.Start(ctx.Done())

	syncCtx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	for typ, ok := range factory.WaitForCacheSync(syncCtx.Done()) {
		if !ok {
			return nil, fmt.Errorf("informer for %v did not sync within %s: are the queue-scheduler CRDs installed?", typ, syncTimeout)
		}
	}
	klog.FromContext(ctx).V(2).Info("Queue accounting synced")
	a.serveMetrics(ctx)
	return a, nil
}

// WithoutManagedFields is an informer transform that drops an object's managed fields before it is
// cached: no reader of the caches uses them, they are often the larger part of a small object, and
// the API server keeps an object's managed fields on an update that leaves them out.
func WithoutManagedFields(obj any) (any, error) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
	}
	return obj, nil
}

// sharesInformed reports whether the shares have been told of every node and queue the informers
// started with: from then on, the shares go stale only on a change.
func (a *Accounting) sharesInformed() bool {
	for _, synced := range a.handlersSynced {
		if !synced() {
			return false
		}
	}
	return true
}

// Synced says whether the accounting holds every pod, node, queue, PodGroup, QueueUnit and
// namespace its informers started with: a reader of its state before then would see work missing.
func (a *Accounting) Synced() bool {
	return a.Store.namespacesSynced() && a.podsSynced() && a.sharesInformed()
}
