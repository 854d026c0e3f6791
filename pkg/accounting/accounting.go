// Package accounting is the one in-memory view of queues that every queue-scheduler plugin, the
// embedded controller and the webhook of a scheduler share; the composition root (pkg/scheduler)
// builds it once per scheduler and hands it to each. It is fed by informers and read without API
// calls, so a scheduling cycle never waits on the API server.
package accounting

import (
	"context"
	"fmt"
	"maps"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/gangs"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/informers/externalversions"
	buslisters "github.com/queue-scheduler/queue-scheduler/pkg/generated/listers/bus/v1alpha1"
	listers "github.com/queue-scheduler/queue-scheduler/pkg/generated/listers/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/history"
	"github.com/queue-scheduler/queue-scheduler/pkg/holdreport"
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
	// GangAttempts are the gangs' reclaims under way: Reclaim starts and ends them, Gang reads them.
	GangAttempts *gangs.Attempts
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
	// ledger remembers what each queue used.
	ledger ledger
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

// GangKey is "namespace/name" of the PodGroup of queue-scheduler the pod belongs to, or "" for a pod
// of no gang, by the rule the admission webhook labels pods by (schedulingv1beta1.GangOf): a pod that
// came past the webhook is counted in its gang all the same.
func (g *Gangs) Key(pod *v1.Pod) string {
	if name, ok := schedulingv1beta1.GangOf(pod, g.takesGangsOf); ok {
		return pod.Namespace + "/" + name
	}
	return ""
}

// GangName is GangKey as a name; ok is false for a pod of no gang.
func (g *Gangs) Name(pod *v1.Pod) (group types.NamespacedName, ok bool) {
	name, ok := schedulingv1beta1.GangOf(pod, g.takesGangsOf)
	return types.NamespacedName{Namespace: pod.Namespace, Name: name}, ok
}

// TakesGangsOf says whether the PodGroups of source are gangs of queue-scheduler.
func (g *Gangs) Takes(source schedulingv1beta1.GangSource) bool {
	return g.takesGangsOf(source)
}

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
	nsInformer := kube.Core().V1().Namespaces()
	events := &Events{}
	a := &Accounting{
		Client:     client,
		Informers:  factory,
		Events:     events,
		StartPlans: NewStartPlans(events),
		Store: &Store{
			informers:        factory,
			queues:           v1beta1.Queues().Lister(),
			podGroups:        v1beta1.PodGroups().Lister(),
			queueUnits:       v1beta1.QueueUnits().Lister(),
			commands:         factory.Bus().V1alpha1().Commands().Lister(),
			namespaces:       nsInformer.Lister(),
			nsInformer:       nsInformer.Informer(),
			namespacesSynced: nsInformer.Informer().HasSynced,
			pins:             pins{byUID: map[types.UID]string{}},
			queueIndex:       v1beta1.Queues().Informer().GetIndexer(),
			podGroupIndex:    v1beta1.PodGroups().Informer().GetIndexer(),
			units: units{
				indexer:         v1beta1.QueueUnits().Informer().GetIndexer(),
				jobs:            kube.Batch().V1().Jobs().Lister(),
				priorityClasses: kube.Scheduling().V1().PriorityClasses().Lister(),
			},
		},
		Gangs:        &Gangs{takesGangsOf: takes, podGroups: v1beta1.PodGroups().Lister()},
		clock:        clk,
		GangAttempts: gangs.NewAttempts(clk),
		reservations: reservations{admitted: map[WorkKey]v1.ResourceList{}},
		ledger:       ledger{settings: cfg.History},
	}
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

// QueueInformer is the shared informer on queues, for plugins that react to queue changes.
func (s *Store) QueueInformer() cache.SharedIndexInformer {
	return s.informers.Scheduling().V1beta1().Queues().Informer()
}

// PodGroupInformer is the shared informer on PodGroups.
func (s *Store) PodGroupInformer() cache.SharedIndexInformer {
	return s.informers.Scheduling().V1beta1().PodGroups().Informer()
}

// NamespacesSynced reports whether namespaces, and so their queue annotations, are known yet.
func (s *Store) NamespacesSynced() bool { return s.namespacesSynced() }

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

// Queues lists queues from the cache.
func (s *Store) Queues() listers.QueueLister { return s.queues }

// PodGroups lists PodGroups from the cache.
func (s *Store) PodGroups() listers.PodGroupLister { return s.podGroups }

// QueueUnits lists QueueUnits from the cache.
func (s *Store) QueueUnits() listers.QueueUnitLister { return s.queueUnits }

// Namespaces lists namespaces from the cache.
func (s *Store) Namespaces() corelisters.NamespaceLister { return s.namespaces }

// OnNamespaceLabels calls f with the name of a namespace whose labels changed: the queues that select
// it may have changed.
func (s *Store) OnNamespaceLabels(f func(namespace string)) error {
	_, err := s.nsInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: func(oldObj, obj any) {
		old, okOld := oldObj.(*v1.Namespace)
		ns, ok := obj.(*v1.Namespace)
		if okOld && ok && !maps.Equal(old.Labels, ns.Labels) {
			f(ns.Name)
		}
	}})
	return err
}

// Commands lists Commands from the cache.
func (s *Store) Commands() buslisters.CommandLister { return s.commands }

// Queue returns the named queue, or false when it does not exist.
func (s *Store) Queue(name string) (*schedulingv1beta1.Queue, bool) {
	q, err := s.queues.Get(name)
	if err != nil {
		return nil, false
	}
	return q, true
}

// QueueHold says why queue name (q, nil when it does not exist) holds back all of its work, or
// nothing when it does not.
func (s *Store) QueueHold(name string, q *schedulingv1beta1.Queue) holdreport.Why {
	if q == nil {
		return holdreport.QueueHold(name, nil, "", "")
	}
	return holdreport.QueueHold(name, q, s.SchedulingState(q), s.TreeFaultOf(q).Detail)
}

// SchedulingState is the state that decides whether a queue's pending work may be scheduled now,
// derived from the queue's spec and the queue tree, never from status: a request to suspend takes
// effect at once, and a queue whose parent does not exist, or whose parent chain is a cycle, is
// Unknown.
func (s *Store) SchedulingState(q *schedulingv1beta1.Queue) schedulingv1beta1.QueueState {
	switch {
	case q.Spec.State == schedulingv1beta1.QueueStateSuspended:
		return schedulingv1beta1.QueueStateSuspended
	case s.TreeFaultOf(q).Reason != "":
		return schedulingv1beta1.QueueStateUnknown
	case q.Spec.State == "":
		return schedulingv1beta1.QueueStateOpen
	default:
		return q.Spec.State
	}
}
