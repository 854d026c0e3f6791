// Package controller is the embedded controller of queue-scheduler: on the leader replica it keeps
// Queue and PodGroup status current from the shared accounting, cascades state changes down the
// queue tree, executes Commands, creates the default and root queues, and cleans up after deleted
// queues. It follows the sample-controller loop: informer event → key in a rate-limited workqueue →
// sync(key) that reads caches, computes the desired state and writes only what differs.
package controller

import (
	"cmp"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/queue-scheduler/queue-scheduler/apis/config"
	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/gangsource"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned/scheme"
	"github.com/queue-scheduler/queue-scheduler/pkg/readmodel"
)

// ComponentName is the source of the controller's events.
const ComponentName = "queue-scheduler-controller"

// workers is how many keys of each kind are synced at once.
const workers = 2

// queueWorkers is how many queues are synced at once. A queue's sync is mostly the wait for its
// status write, so more of them than of the other kinds.
const queueWorkers = 8

// podGroupWorkers is how many PodGroups, and how many other APIs' PodGroups, are synced at once. A
// sync is mostly the wait for a write (the mirror's creation, a status), and job operators create
// PodGroups in bursts whose pods wait for them.
const podGroupWorkers = 8

// Controller is the embedded queue controller.
type Controller struct {
	kube     kubernetes.Interface
	acct     *accounting.Accounting
	recorder record.EventRecorder
	// clock is the accounting's: status pacing, grace periods and the workqueues' delays run on it.
	clock clock.WithTickerAndDelayedExecution
	// usageWrites spaces the status writes that usage changes cause.
	usageWrites *throttle
	// checkpoints is how often a queue's usage history is written into its status.
	checkpoints time.Duration
	// consumers watches the jobs QueueUnits queue.
	consumers *consumers
	// gangs watches the PodGroups of the other gang APIs, which the controller mirrors.
	gangs *gangsource.Sources
	// unitsWaiting is set when the last dequeue pass left units Enqueued: a change of room may let
	// them out.
	unitsWaiting atomic.Bool
	// view is the read model: the forecast of the pending work's starts, the runtimes learned, the
	// live view's answers.
	view *readmodel.Model
	// shown is what the ExpectedStart conditions this replica wrote show.
	shown shownStarts

	// members are the pods of PodGroups, terminal ones included, indexed by group.
	memberInformers informers.SharedInformerFactory
	members         corelisters.PodLister
	membersIndexer  cache.Indexer

	// startOnce starts the informers of the controller's own, once, for the life of the process
	// (processDone), not of one leadership term: a replica that leads again finds them running.
	startOnce   sync.Once
	processDone <-chan struct{}
	// adminNamespace is the scheduler's own namespace, where the lease lives: its Commands may
	// operate any queue.
	adminNamespace string

	// mu guards wq, the workqueues of the current leadership term; nil while not leading.
	mu sync.RWMutex
	wq *workqueues

	// synced counts the keys this replica synced, for tests and diagnostics.
	synced atomic.Int64
}

// workqueues hold the keys to sync during one leadership term.
type workqueues struct {
	queues    workqueue.TypedRateLimitingInterface[string]
	podGroups workqueue.TypedRateLimitingInterface[string]
	commands  workqueue.TypedRateLimitingInterface[string]
	units     workqueue.TypedRateLimitingInterface[string]
	gangs     workqueue.TypedRateLimitingInterface[string]
	// admissions holds queues whose Pending PodGroups are to be admitted in order.
	admissions workqueue.TypedRateLimitingInterface[string]
}

// newWorkqueues makes the workqueues of a term, whose delays run on clk.
func newWorkqueues(clk clock.WithTicker) *workqueues {
	q := func(name string) workqueue.TypedRateLimitingInterface[string] {
		return workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: name, Clock: clk})
	}
	return &workqueues{queues: q("queues"), podGroups: q("podgroups"), commands: q("commands"),
		units: q("queueunits"), gangs: q("gangsources"), admissions: q("podgroupadmissions")}
}

func (w *workqueues) shutDown() {
	w.queues.ShutDown()
	w.podGroups.ShutDown()
	w.commands.ShutDown()
	w.units.ShutDown()
	w.gangs.ShutDown()
	w.admissions.ShutDown()
}

// New builds the controller on the scheduler's accounting (which the composition root hands it); dyn reaches the jobs QueueUnits queue, of
// any kind; gangs are the other gang APIs whose PodGroups it mirrors (none when nil), whose
// CustomResourceDefinitions it watches through meta; pacing spaces the status writes of usage;
// forecasts configure its forecasts of expected starts. Its event broadcaster stops with ctx; call
// Run to start it.
func New(ctx context.Context, kube kubernetes.Interface, dyn dynamic.Interface, meta metadata.Interface, acct *accounting.Accounting,
	gangs []gangsource.Source, pacing StatusPacing, forecasts readmodel.ForecastSettings) (*Controller, error) {
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kube.CoreV1().Events("")})
	memberInformers := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithTransform(accounting.WithoutManagedFields),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = schedulingv1beta1.PodGroupLabel }))
	podInformer := memberInformers.Core().V1().Pods()
	c := &Controller{
		kube:            kube,
		acct:            acct,
		recorder:        broadcaster.NewRecorder(scheme.Scheme, v1.EventSource{Component: ComponentName}),
		clock:           acct.Clock(),
		usageWrites:     newThrottle(pacing),
		checkpoints:     cmp.Or(pacing.Checkpoint, config.DefaultCheckpointInterval),
		memberInformers: memberInformers,
		members:         podInformer.Lister(),
	}
	c.consumers = newConsumers(dyn, kube.Discovery(), kube.AuthorizationV1().SelfSubjectAccessReviews(), c.onConsumer, c.clock)
	c.view = readmodel.New(acct, forecasts, c.consumers)
	c.gangs = gangsource.NewSources(gangs, kube.Discovery(), meta, c.onGangSource, c.clock)
	acct.UseConsumerState(c.consumerDone)
	if err := podInformer.Informer().AddIndexers(cache.Indexers{byGroup: acct.Gangs.Index}); err != nil {
		return nil, err
	}
	c.membersIndexer = podInformer.Informer().GetIndexer()
	if err := c.addEventHandlers(podInformer.Informer()); err != nil {
		return nil, err
	}
	return c, nil
}

// View is the read model the controller writes expected starts and runtimes from, which the live
// view serves.
func (c *Controller) View() *readmodel.Model { return c.view }

// lead syncs until ctx ends. It runs only while this replica leads, with workqueues of its own so
// that a later term starts clean.
func (c *Controller) lead(ctx context.Context) {
	logger := klog.FromContext(ctx)
	c.startOnce.Do(func() {
		done := c.processDone
		if done == nil {
			done = ctx.Done()
		}
		c.memberInformers.Start(done)
		c.consumers.start(done)
		c.gangs.Start(done)
	})
	if !cache.WaitForCacheSync(ctx.Done(), c.memberInformers.Core().V1().Pods().Informer().HasSynced) {
		return
	}
	if err := c.ensureQueues(ctx); err != nil {
		utilruntime.HandleErrorWithContext(ctx, err, "Creating the default and root queues")
	}
	wq := newWorkqueues(c.clock)
	c.mu.Lock()
	c.wq = wq
	c.mu.Unlock()
	c.enqueueAll()
	logger.Info("Queue controller leading")

	var wg sync.WaitGroup
	for range queueWorkers {
		wg.Go(func() { c.work(ctx, wq.queues, c.syncQueue) })
	}
	for range workers {
		wg.Go(func() { c.work(ctx, wq.commands, c.syncCommand) })
		wg.Go(func() { c.work(ctx, wq.admissions, c.admitPending) })
	}
	wg.Go(func() { c.work(ctx, wq.units, c.syncUnits) })
	wg.Go(func() { c.refreshStarts(ctx) })
	for range podGroupWorkers {
		wg.Go(func() { c.work(ctx, wq.gangs, c.syncGang) })
		wg.Go(func() { c.work(ctx, wq.podGroups, c.syncPodGroup) })
	}
	<-ctx.Done()
	c.mu.Lock()
	c.wq = nil
	c.mu.Unlock()
	wq.shutDown()
	wg.Wait()
	logger.Info("Queue controller stopped leading")
}

// enqueueAll queues every object once, as at the start of a term nothing is known to be current.
func (c *Controller) enqueueAll() {
	for _, q := range c.acct.Store.AllQueues() {
		c.enqueueQueue(q.Name)
	}
	pgs, _ := c.acct.Store.PodGroups().List(labels.Everything())
	for _, pg := range pgs {
		c.enqueuePodGroup(pg.Namespace + "/" + pg.Name)
	}
	cmds, _ := c.acct.Store.Commands().List(labels.Everything())
	for _, cmd := range cmds {
		c.enqueueCommand(cmd.Namespace + "/" + cmd.Name)
	}
	for source, keys := range c.gangs.Keys() {
		for _, key := range keys {
			c.enqueueGang(string(source) + "/" + key)
		}
	}
	c.enqueueDequeue()
}

func (c *Controller) enqueue(pick func(*workqueues) workqueue.TypedRateLimitingInterface[string], key string) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.wq != nil {
		pick(c.wq).Add(key)
	}
}

func (c *Controller) enqueueQueue(name string) {
	c.enqueue(func(w *workqueues) workqueue.TypedRateLimitingInterface[string] { return w.queues }, name)
}

// enqueueQueueAfter syncs the queue after d: its usage checkpoint comes due.
func (c *Controller) enqueueQueueAfter(name string, d time.Duration) {
	c.enqueueAfter(func(w *workqueues) workqueue.TypedRateLimitingInterface[string] { return w.queues }, name, d)
}

// enqueueQueuePaced syncs the queue at most once per the pacing's interval; the changes meanwhile
// are folded into that sync. A change of a queue's deserved share takes this way.
func (c *Controller) enqueueQueuePaced(name string) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.wq != nil {
		c.wq.queues.AddAfter(name, c.usageWrites.delay(name, c.clock.Now()))
	}
}

// enqueueQueueForWork follows a change of the work a queue holds, its PodGroups and QueueUnits. A
// closed queue is synced at once, as the change may end its closing, and so is a queue that is gone
// (what it left behind is cleaned up). Otherwise the room the change may have freed is offered at
// once (one admission pass, which its workqueue folds across a burst of changes) and the status,
// whose counts are all that moved, is written at the pacing's pace.
func (c *Controller) enqueueQueueForWork(name string) {
	if q, ok := c.acct.Store.Queue(name); !ok || q.Spec.State == schedulingv1beta1.QueueStateClosed {
		c.enqueueQueue(name)
		return
	}
	c.enqueueAdmission(name)
	c.offerRoomToUnits()
	c.enqueueQueuePaced(name)
}

// enqueueQueueForUsage follows a change of a queue's pods: at once when the last pod of a closed
// queue left, which may end its closing; otherwise at the pacing's pace, a closed queue's included,
// whose condition message counts its pods down.
func (c *Controller) enqueueQueueForUsage(name string) {
	if q, ok := c.acct.Store.Queue(name); ok && q.Spec.State == schedulingv1beta1.QueueStateClosed && c.acct.Pods.PodCount(name) == 0 {
		c.enqueueQueue(name)
		return
	}
	c.enqueueQueuePaced(name)
}

// enqueueAfter queues key on the workqueue pick chooses once after has passed.
func (c *Controller) enqueueAfter(pick func(*workqueues) workqueue.TypedRateLimitingInterface[string], key string, after time.Duration) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.wq != nil {
		pick(c.wq).AddAfter(key, after)
	}
}

func podGroups(w *workqueues) workqueue.TypedRateLimitingInterface[string] { return w.podGroups }

func (c *Controller) enqueuePodGroup(key string) { c.enqueue(podGroups, key) }

func (c *Controller) enqueueCommand(key string) {
	c.enqueue(func(w *workqueues) workqueue.TypedRateLimitingInterface[string] { return w.commands }, key)
}

// work processes keys until the workqueue shuts down.
func (c *Controller) work(ctx context.Context, q workqueue.TypedRateLimitingInterface[string], sync func(context.Context, string) error) {
	for {
		key, shutdown := q.Get()
		if shutdown {
			return
		}
		if err := sync(ctx, key); err != nil && ctx.Err() == nil {
			utilruntime.HandleErrorWithContext(ctx, err, "Sync failed; retrying", "key", key)
			q.AddRateLimited(key)
		} else {
			q.Forget(key)
			c.synced.Add(1)
		}
		q.Done(key)
	}
}

func splitKey(key string) (namespace, name string, err error) {
	namespace, name, err = cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return "", "", fmt.Errorf("bad key %q: %w", key, err)
	}
	return namespace, name, nil
}

// Synced counts the keys this replica has synced since it started.
func (c *Controller) Synced() int64 { return c.synced.Load() }

// Leading says whether this replica currently leads and syncs.
func (c *Controller) Leading() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.wq != nil
}
