package accounting

import (
	"maps"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/informers/externalversions"
	buslisters "github.com/queue-scheduler/queue-scheduler/pkg/generated/listers/bus/v1alpha1"
	listers "github.com/queue-scheduler/queue-scheduler/pkg/generated/listers/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/holdreport"
)

// Store is the accounting's informer-fed view of the queue layer's objects: the queues and their
// tree, the namespaces they select, the PodGroups, QueueUnits and Commands, as their informers'
// stores hold them, with the indexes the accounting adds and the queue each piece of work was
// pinned to. It holds no state of its own beside the pins: what it says is what the informers hold.
type Store struct {
	informers        externalversions.SharedInformerFactory
	queues           listers.QueueLister
	podGroups        listers.PodGroupLister
	queueUnits       listers.QueueUnitLister
	commands         buslisters.CommandLister
	namespaces       corelisters.NamespaceLister
	nsInformer       cache.SharedIndexInformer
	namespacesSynced cache.InformerSynced
	// queueIndex and podGroupIndex are the queue and PodGroup informers' stores, with the indexes
	// the accounting adds, taken once: reading them is a lookup, not a walk of the factory.
	queueIndex    cache.Indexer
	podGroupIndex cache.Indexer
	units         units
	pins          pins
	selectors     selectors
}

// newStore builds the store on the informers of factory and on kube's namespaces, Jobs and
// PriorityClasses.
func newStore(factory externalversions.SharedInformerFactory, kube informers.SharedInformerFactory) *Store {
	v1beta1 := factory.Scheduling().V1beta1()
	nsInformer := kube.Core().V1().Namespaces()
	return &Store{
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
	}
}

// NamespacesSynced reports whether namespaces, and so their queue annotations, are known yet.
func (s *Store) NamespacesSynced() bool { return s.namespacesSynced() }

// Queues lists queues from the cache.
func (s *Store) Queues() listers.QueueLister { return s.queues }

// PodGroups lists PodGroups from the cache.
func (s *Store) PodGroups() listers.PodGroupLister { return s.podGroups }

// QueueUnits lists QueueUnits from the cache.
func (s *Store) QueueUnits() listers.QueueUnitLister { return s.queueUnits }

// Namespaces lists namespaces from the cache.
func (s *Store) Namespaces() corelisters.NamespaceLister { return s.namespaces }

// Commands lists Commands from the cache.
func (s *Store) Commands() buslisters.CommandLister { return s.commands }

// QueueInformer is the shared informer on queues, for plugins that react to queue changes.
func (s *Store) QueueInformer() cache.SharedIndexInformer {
	return s.informers.Scheduling().V1beta1().Queues().Informer()
}

// PodGroupInformer is the shared informer on PodGroups.
func (s *Store) PodGroupInformer() cache.SharedIndexInformer {
	return s.informers.Scheduling().V1beta1().PodGroups().Informer()
}

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

// Rules is the accounting as the queue rules read it (rules.View and rules.Resolver): the store's
// objects, and the pods the usage counts.
type Rules struct {
	*Store
	acct *Accounting
}

// Rules is the accounting as the queue rules read it.
func (a *Accounting) Rules() Rules { return Rules{Store: a.Store, acct: a} }

// HoldsWork reports whether a queue holds PodGroups, QueueUnits or live pods.
func (r Rules) HoldsWork(queue string) bool { return r.acct.HoldsWork(queue) }

// QueueOf is the queue of a pod (Accounting.QueueOf).
func (r Rules) QueueOf(pod *v1.Pod) (string, error) { return r.acct.QueueOf(pod) }
