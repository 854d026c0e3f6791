package v1beta1

import corev1 "k8s.io/api/core/v1"

// GangSource names an API of PodGroups whose gangs queue-scheduler takes besides its own: it mirrors
// each of them into a PodGroup of its own, of the same name, and writes the source's status back.
type GangSource string

// The gang sources.
const (
	// GangSourceSchedulerPlugins is scheduler-plugins' coscheduling PodGroup, scheduling.x-k8s.io/v1alpha1.
	GangSourceSchedulerPlugins GangSource = "scheduler-plugins"
	// GangSourceVolcano is Volcano's PodGroup, scheduling.volcano.sh/v1beta1.
	GangSourceVolcano GangSource = "volcano"
	// GangSourceKubernetes is the native PodGroup of the Workload API, scheduling.k8s.io/v1beta1.
	GangSourceKubernetes GangSource = "kubernetes"
)

// GangSources are the gang sources, in the order a pod's references are read.
var GangSources = []GangSource{GangSourceSchedulerPlugins, GangSourceVolcano, GangSourceKubernetes}

// How the other gang APIs tie pods and PodGroups together.
const (
	// SchedulerPluginsPodGroupLabel on a pod names its scheduler-plugins PodGroup.
	SchedulerPluginsPodGroupLabel = "scheduling.x-k8s.io/pod-group"
	// VolcanoGroupNameAnnotation on a pod names its Volcano PodGroup.
	VolcanoGroupNameAnnotation = "scheduling.k8s.io/group-name"
	// VolcanoTaskAnnotation on a pod names its task in a Volcano job (minTaskMember).
	VolcanoTaskAnnotation = "volcano.sh/task-spec"
	// GangSourceLabel on a PodGroup of queue-scheduler says which source's PodGroup it mirrors; the
	// mirror's controller owner reference names that PodGroup.
	GangSourceLabel = GroupName + "/gang-source"
)

// +k8s:deepcopy-gen=false

// GangRef is a PodGroup a pod names: its name in the pod's namespace, and the API that names it
// ("" for queue-scheduler's own).
type GangRef struct {
	Source GangSource
	Name   string
}

// GangRefs returns every PodGroup the pod names: queue-scheduler's pod-group label first, then
// scheduler-plugins' label, Volcano's annotation and the native spec.schedulingGroup.podGroupName.
func GangRefs(pod *corev1.Pod) []GangRef {
	var refs []GangRef
	add := func(source GangSource, name string) {
		if name != "" {
			refs = append(refs, GangRef{Source: source, Name: name})
		}
	}
	add("", pod.Labels[PodGroupLabel])
	add(GangSourceSchedulerPlugins, pod.Labels[SchedulerPluginsPodGroupLabel])
	add(GangSourceVolcano, pod.Annotations[VolcanoGroupNameAnnotation])
	if g := pod.Spec.SchedulingGroup; g != nil && g.PodGroupName != nil {
		add(GangSourceKubernetes, *g.PodGroupName)
	}
	return refs
}

// TaskOf names the task of a gang's pod, for its PodGroup's minTaskMember: queue-scheduler's task
// label, else Volcano's task annotation or label; "" for none.
func TaskOf(pod *corev1.Pod) string {
	if task := pod.Labels[TaskLabel]; task != "" {
		return task
	}
	if task := pod.Annotations[VolcanoTaskAnnotation]; task != "" {
		return task
	}
	return pod.Labels[VolcanoTaskAnnotation]
}

// GangOf names the PodGroup of queue-scheduler that pod belongs to, in the pod's namespace: its
// pod-group label, else the first PodGroup of another gang API that takes says queue-scheduler
// takes (queue-scheduler's PodGroup that stands for it has the same name). ok is false for a pod of
// no gang, or only of gang APIs that are not taken. The admission webhook writes the label by it,
// and the scheduler reads a pod's gang by it, so that a pod that came past the webhook is counted
// in its gang all the same.
func GangOf(pod *corev1.Pod, takes func(GangSource) bool) (name string, ok bool) {
	if name := pod.Labels[PodGroupLabel]; name != "" {
		return name, true
	}
	for _, ref := range GangRefs(pod) {
		if takes(ref.Source) {
			return ref.Name, true
		}
	}
	return "", false
}
