package accounting

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	corelisters "k8s.io/client-go/listers/core/v1"

	"github.com/queue-scheduler/queue-scheduler/pkg/generated/informers/externalversions"
	buslisters "github.com/queue-scheduler/queue-scheduler/pkg/generated/listers/bus/v1alpha1"
	listers "github.com/queue-scheduler/queue-scheduler/pkg/generated/listers/scheduling/v1beta1"
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
