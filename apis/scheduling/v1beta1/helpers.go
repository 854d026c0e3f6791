package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// EffectiveState is the state in force for a queue: status.state once the controller has written it,
// else the requested spec.state, else Open.
func (q *Queue) EffectiveState() QueueState {
	if q.Status.State != "" {
		return q.Status.State
	}
	if q.Spec.State != "" {
		return q.Spec.State
	}
	return QueueStateOpen
}

// PodGroupKey is "namespace/name" of the PodGroup a pod belongs to, or "" for a pod without one.
func PodGroupKey(pod *corev1.Pod) string {
	if group, ok := PodGroupName(pod); ok {
		return group.String()
	}
	return ""
}

// PodGroupName names the PodGroup a pod belongs to without building its key; ok is false for a pod
// without one.
func PodGroupName(pod *corev1.Pod) (group types.NamespacedName, ok bool) {
	name := pod.Labels[PodGroupLabel]
	return types.NamespacedName{Namespace: pod.Namespace, Name: name}, name != ""
}

// MinMemberOrOne is the gang size of a PodGroup: spec.minMember, at least 1.
func (pg *PodGroup) MinMemberOrOne() int32 { return max(pg.Spec.MinMember, 1) }

// Dequeued says whether the QueueUnit has been admitted by its queue.
func (u *QueueUnit) Dequeued() bool { return u.Status.Phase == QueueUnitDequeued }

// QueueFor names the queue of work that names queue (may be empty) in a namespace whose queue
// annotation is namespaceQueue (may be empty): the named queue, else the namespace's, else
// "default".
func QueueFor(queue, namespaceQueue string) string {
	switch {
	case queue != "":
		return queue
	case namespaceQueue != "":
		return namespaceQueue
	}
	return DefaultQueue
}
