package accounting

import (
	"fmt"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

// Index names on the shared informers.
const (
	byParent = "parent"
	byQueue  = "queue"
	// byQueuePhase indexes PodGroups with minResources by "queue/phase", so that the reservations
	// of a queue cost its admitted groups, not all its groups.
	byQueuePhase = "queue-phase"
)

// addIndexers indexes queues by parent, PodGroups and QueueUnits by queue, and QueueUnits by
// consumer, so that a queue finds its children and its work, and a pod its unit, without a scan.
func (a *Accounting) addIndexers() error {
	v1beta1 := a.Informers.Scheduling().V1beta1()
	if err := v1beta1.Queues().Informer().AddIndexers(cache.Indexers{byParent: parentIndex}); err != nil {
		return fmt.Errorf("index queues: %w", err)
	}
	if err := v1beta1.PodGroups().Informer().AddIndexers(cache.Indexers{byQueue: a.Store.podGroupQueueIndex, byQueuePhase: a.Store.podGroupQueuePhaseIndex}); err != nil {
		return fmt.Errorf("index PodGroups: %w", err)
	}
	if err := v1beta1.QueueUnits().Informer().AddIndexers(cache.Indexers{byQueue: a.Store.queueUnitQueueIndex, byConsumer: consumerIndex}); err != nil {
		return fmt.Errorf("index QueueUnits: %w", err)
	}
	if err := a.releaseWork(v1beta1.PodGroups().Informer()); err != nil {
		return err
	}
	return a.releaseWork(v1beta1.QueueUnits().Informer())
}

func parentIndex(obj any) ([]string, error) {
	q, ok := obj.(*schedulingv1beta1.Queue)
	if !ok || q.Name == schedulingv1beta1.RootQueue {
		return nil, nil
	}
	return []string{ParentOf(q)}, nil
}

func (s *Store) podGroupQueueIndex(obj any) ([]string, error) {
	pg, ok := obj.(*schedulingv1beta1.PodGroup)
	if !ok {
		return nil, nil
	}
	return []string{s.pinnedQueueOfPodGroup(pg)}, nil
}

func (s *Store) podGroupQueuePhaseIndex(obj any) ([]string, error) {
	pg, ok := obj.(*schedulingv1beta1.PodGroup)
	if !ok || len(pg.Spec.MinResources) == 0 {
		return nil, nil
	}
	return []string{queuePhaseKey(s.pinnedQueueOfPodGroup(pg), string(pg.Status.Phase))}, nil
}

func (s *Store) queueUnitQueueIndex(obj any) ([]string, error) {
	u, ok := obj.(*schedulingv1beta1.QueueUnit)
	if !ok {
		return nil, nil
	}
	return []string{s.pinnedQueueOfQueueUnit(u)}, nil
}

// ParentOf names a queue's parent: spec.parent, else the root.
func ParentOf(q *schedulingv1beta1.Queue) string {
	if q.Spec.Parent != "" {
		return q.Spec.Parent
	}
	return schedulingv1beta1.RootQueue
}

// Children returns the queues whose parent is name.
func (s *Store) Children(name string) []*schedulingv1beta1.Queue {
	return byIndex[schedulingv1beta1.Queue](s.queueIndex, byParent, name)
}

// PodGroupsOf returns the PodGroups of a queue.
func (s *Store) PodGroupsOf(queue string) []*schedulingv1beta1.PodGroup {
	return byIndex[schedulingv1beta1.PodGroup](s.podGroupIndex, byQueue, queue)
}

// QueueUnitsOf returns the QueueUnits of a queue.
func (s *Store) QueueUnitsOf(queue string) []*schedulingv1beta1.QueueUnit {
	return byIndex[schedulingv1beta1.QueueUnit](s.units.indexer, byQueue, queue)
}

// QueueNames names every queue.
func (s *Store) QueueNames() []string { return s.queueIndex.ListKeys() }

// AllQueues lists every queue.
func (s *Store) AllQueues() []*schedulingv1beta1.Queue {
	qs, _ := s.queues.List(labels.Everything())
	return qs
}

func byIndex[T any](indexer cache.Indexer, index, value string) []*T {
	objs, err := indexer.ByIndex(index, value)
	if err != nil {
		return nil
	}
	out := make([]*T, 0, len(objs))
	for _, o := range objs {
		if t, ok := o.(*T); ok {
			out = append(out, t)
		}
	}
	return out
}

// releaseWork tells of the room admitted work gives back (Events.WorkReleased): deleted, or a
// PodGroup whose phase or minResources change. It drops what the accounting keeps of a deleted
// PodGroup or QueueUnit beyond the informer's store: its pinned queue and its reservation. Indexes
// are updated before any handler runs, so the pin serves them to the end.
func (a *Accounting) releaseWork(informer cache.SharedIndexInformer) error {
	_, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(oldObj, obj any) {
			old, okOld := oldObj.(*schedulingv1beta1.PodGroup)
			pg, ok := obj.(*schedulingv1beta1.PodGroup)
			if okOld && ok && reservesLess(old, pg) {
				a.Events.WorkReleased.notify(a.Store.QueueOfPodGroup(pg))
			}
		},
		DeleteFunc: func(obj any) {
			if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tombstone.Obj
			}
			switch o := obj.(type) {
			case *schedulingv1beta1.PodGroup:
				a.Events.WorkReleased.notify(a.Store.QueueOfPodGroup(o))
				a.Store.pins.unpin(o.UID)
				a.ForgetWork(PodGroupWork(o))
				a.gangFits.forget(o.Namespace + "/" + o.Name)
			case *schedulingv1beta1.QueueUnit:
				a.Events.WorkReleased.notify(a.Store.QueueOfQueueUnit(o))
				a.Store.pins.unpin(o.UID)
				a.ForgetWork(UnitWork(o))
			}
		},
	})
	return err
}

// HoldsWork reports whether a queue holds PodGroups, QueueUnits or live pods.
func (a *Accounting) HoldsWork(queue string) bool {
	return len(a.Store.PodGroupsOf(queue)) > 0 || len(a.Store.QueueUnitsOf(queue)) > 0 || a.Pods.PodCount(queue) > 0
}
