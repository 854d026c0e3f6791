package accounting

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

// QueueOf names the queue of a pod. A pod the accounting counts already has its queue resolved, once,
// and every reader gets that one; any other pod is resolved now: its PodGroup's queue; else the pod's
// queue label; else the queue of the QueueUnit its owner is queued by; else its namespace's queue
// annotation; else "default". A pod of a PodGroup that does not exist yet has no queue: the error
// says so.
func (a *Accounting) QueueOf(pod *v1.Pod) (string, error) {
	if queue, ok := a.Pods.queueOf(pod.UID); ok {
		return queue, nil
	}
	queue, _, err := a.resolveQueue(pod, a.Store.UnitOf(pod))
	return queue, err
}

// resolveQueue is QueueOf for a pod not counted yet, whose QueueUnit (nil for none) is known already.
// It says whether the answer is settled: named by the pod's PodGroup, its label or its unit, which do
// not change; a queue that comes from the namespace is resolved again at each of the pod's updates.
func (a *Accounting) resolveQueue(pod *v1.Pod, unit *schedulingv1beta1.QueueUnit) (queue string, settled bool, err error) {
	return a.resolveQueueIn(pod, unit, a.Store.namespaceAnnotation, a.Store.PodGroupInCache)
}

// QueueOfNewPod is QueueOf for a pod being created, whose namespace (nil for none) the caller read,
// and whose PodGroup podGroup reads: a namespace or a PodGroup created a moment before the pod may
// not be in the cache yet.
func (a *Accounting) QueueOfNewPod(pod *v1.Pod, ns *v1.Namespace, podGroup PodGroupGetter) (string, error) {
	queue, _, err := a.resolveQueueIn(pod, a.Store.UnitOf(pod), func(string) string {
		if ns == nil {
			return ""
		}
		return ns.Annotations[schedulingv1beta1.QueueAnnotation]
	}, podGroup)
	return queue, err
}

// PodGroupGetter reads a PodGroup; a missing one is a NotFound error.
type PodGroupGetter func(namespace, name string) (*schedulingv1beta1.PodGroup, error)

// PodGroupInCache reads a PodGroup from the informer's cache.
func (s *Store) PodGroupInCache(namespace, name string) (*schedulingv1beta1.PodGroup, error) {
	return s.podGroups.PodGroups(namespace).Get(name)
}

// resolveQueueIn is resolveQueue with the namespace's queue annotation read by annotation, and the
// pod's PodGroup by podGroup.
func (a *Accounting) resolveQueueIn(pod *v1.Pod, unit *schedulingv1beta1.QueueUnit, annotation func(namespace string) string,
	podGroup PodGroupGetter) (queue string, settled bool, err error) {
	if group, ok := schedulingv1beta1.GangOf(pod, a.Gangs.takesGangsOf); ok {
		pg, err := podGroup(pod.Namespace, group)
		if err != nil {
			if apierrors.IsNotFound(err) {
				return "", false, missingPodGroup(pod, group)
			}
			return "", false, err
		}
		return a.Store.QueueOfPodGroup(pg), true, nil
	}
	if q := pod.Labels[schedulingv1beta1.QueueLabel]; q != "" {
		return q, true, nil
	}
	if unit != nil {
		return a.Store.QueueOfQueueUnit(unit), true, nil
	}
	// Not settled: the pod's unit, or the Job between it and its unit, may reach the caches after
	// the pod, and the namespace's annotation may change.
	return schedulingv1beta1.QueueFor("", annotation(pod.Namespace)), false, nil
}

// QueueOfPodGroup names the queue of a PodGroup: spec.queue, else its namespace's annotation, else
// "default"; for a PodGroup the informer holds, the queue it was pinned to when first seen.
func (s *Store) QueueOfPodGroup(pg *schedulingv1beta1.PodGroup) string {
	if q, ok := s.pins.lookup(pg.UID); ok {
		return q
	}
	return schedulingv1beta1.QueueFor(pg.Spec.Queue, s.namespaceAnnotation(pg.Namespace))
}

// QueueOfQueueUnit names the queue of a QueueUnit, as QueueOfPodGroup does for PodGroups.
func (s *Store) QueueOfQueueUnit(u *schedulingv1beta1.QueueUnit) string {
	if q, ok := s.pins.lookup(u.UID); ok {
		return q
	}
	return schedulingv1beta1.QueueFor(u.Spec.Queue, s.namespaceAnnotation(u.Namespace))
}

// pinnedQueueOfPodGroup is QueueOfPodGroup for a PodGroup in the informer's store: it pins the queue.
func (s *Store) pinnedQueueOfPodGroup(pg *schedulingv1beta1.PodGroup) string {
	return s.pins.queue(pg.UID, func() string {
		return schedulingv1beta1.QueueFor(pg.Spec.Queue, s.namespaceAnnotation(pg.Namespace))
	})
}

// pinnedQueueOfQueueUnit is QueueOfQueueUnit for a unit in the informer's store: it pins the queue.
func (s *Store) pinnedQueueOfQueueUnit(u *schedulingv1beta1.QueueUnit) string {
	return s.pins.queue(u.UID, func() string {
		return schedulingv1beta1.QueueFor(u.Spec.Queue, s.namespaceAnnotation(u.Namespace))
	})
}

// namespaceAnnotation is the namespace's queue annotation, or "".
func (s *Store) namespaceAnnotation(namespace string) string {
	if ns, err := s.namespaces.Get(namespace); err == nil {
		return ns.Annotations[schedulingv1beta1.QueueAnnotation]
	}
	return ""
}

// missingPodGroup says that the PodGroup a pod names does not exist; for a pod of another gang API,
// that queue-scheduler's mirror of that API's PodGroup does not, and where to look for why.
func missingPodGroup(pod *v1.Pod, group string) error {
	for _, ref := range schedulingv1beta1.GangRefs(pod) {
		if ref.Source != "" && ref.Name == group {
			return fmt.Errorf("PodGroup %q of pod %s/%s, which stands for its %s PodGroup, does not exist (yet): the %s PodGroup's status and events say why",
				group, pod.Namespace, pod.Name, ref.Source, ref.Source)
		}
	}
	return fmt.Errorf("PodGroup %q of pod %s/%s does not exist", group, pod.Namespace, pod.Name)
}
