package rules

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	resourcehelper "k8s.io/component-helpers/resource"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

// Resolver says which queue a pod's work goes to (the accounting).
type Resolver interface {
	QueueOf(pod *corev1.Pod) (string, error)
	QueueOfPodGroup(pg *schedulingv1beta1.PodGroup) string
	UnitOf(pod *corev1.Pod) *schedulingv1beta1.QueueUnit
	QueueOfQueueUnit(u *schedulingv1beta1.QueueUnit) string
}

// PodVerdict is what admission says of a new pod: errs refuse it; a warning admits it with words.
type PodVerdict struct {
	Errs    field.ErrorList
	Warning string
}

// JudgeNewPod admits a new pod (or a Job's pod template, under root) only into a queue that takes
// it, with a request within the capabilities of the queue and its ancestors. A pod that names a
// PodGroup not created yet (podGroup, which reads one, says it is missing) is admitted with a warning:
// the scheduler holds it until the group exists. A pod of a job queued by a QueueUnit is admitted
// while its queue closes, as a PodGroup's members are. The webhook judges pods and Jobs with it, and
// the live view the Jobs whose pods it would refuse now.
func JudgeNewPod(pod *corev1.Pod, root *field.Path, podGroup func(namespace, name string) (*schedulingv1beta1.PodGroup, error),
	r Resolver, view View) (PodVerdict, error) {
	if errs := ValidateOneGang(pod); len(errs) > 0 {
		return PodVerdict{Errs: errs}, nil
	}
	labels := root.Child("metadata", "labels")
	requests := root.Child("spec", "containers[*]", "resources", "requests")
	request := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	if group := pod.Labels[schedulingv1beta1.PodGroupLabel]; group != "" {
		pg, err := podGroup(pod.Namespace, group)
		if err != nil {
			return PodVerdict{Warning: fmt.Sprintf(
				"PodGroup %s/%s does not exist (yet): the pods wait, as PodGroupMissing, until it is created", pod.Namespace, group)}, nil
		}
		queue := r.QueueOfPodGroup(pg)
		if named := pod.Labels[schedulingv1beta1.QueueLabel]; named != "" && named != queue {
			return PodVerdict{Errs: field.ErrorList{field.Invalid(labels.Key(schedulingv1beta1.QueueLabel), named,
				fmt.Sprintf("contradicts the queue %q of the pod's PodGroup %q", queue, group))}}, nil
		}
		if errs := AcceptsWork(labels.Key(schedulingv1beta1.PodGroupLabel), queue, pod.Namespace, true, view); len(errs) > 0 {
			return PodVerdict{Errs: errs}, nil
		}
		return PodVerdict{Errs: FitsCapability(requests, request, queue, view)}, nil
	}
	queue, err := r.QueueOf(pod)
	if err != nil {
		return PodVerdict{}, err
	}
	named := pod.Labels[schedulingv1beta1.QueueLabel]
	path, joining := labels.Key(schedulingv1beta1.QueueLabel), false
	if unit := r.UnitOf(pod); unit != nil {
		// A pod of a queued job joins work its queue accepted already.
		joining = true
		if unitQueue := r.QueueOfQueueUnit(unit); named != "" && named != unitQueue {
			return PodVerdict{Errs: field.ErrorList{field.Invalid(path, named,
				fmt.Sprintf("contradicts the queue %q of QueueUnit %q, which queues the pod's job", unitQueue, unit.Name))}}, nil
		}
		if named == "" {
			path = root.Child("metadata", "ownerReferences")
		}
	} else if named == "" {
		path = field.NewPath("metadata", "namespace")
	}
	if errs := AcceptsWork(path, queue, pod.Namespace, joining, view); len(errs) > 0 {
		return PodVerdict{Errs: errs}, nil
	}
	return PodVerdict{Errs: FitsCapability(requests, request, queue, view)}, nil
}
