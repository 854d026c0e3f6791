package v1beta1

// Labels and annotations that tie pods and namespaces to queues and PodGroups.
const (
	// PodGroupLabel on a pod names its PodGroup in the pod's namespace.
	PodGroupLabel = GroupName + "/pod-group"
	// TaskLabel on a pod names its task within its PodGroup, whose minTaskMember may ask for a least
	// number of pods of each task.
	TaskLabel = GroupName + "/task"
	// QueueLabel on a pod, or QueueAnnotation on its namespace, names the pod's queue when the pod
	// belongs to no PodGroup.
	QueueLabel = GroupName + "/queue"
	// QueueAnnotation on a namespace names the queue of its pods and PodGroups that name none.
	QueueAnnotation = QueueLabel

	// ManagedLabel "true" on a namespace opts it in: its pods that name no scheduler (or the default
	// scheduler, which the API server writes when none is named) are given SchedulerName at admission.
	ManagedLabel = GroupName + "/managed"

	// DefaultQueue is the queue of work that names none. It always exists.
	DefaultQueue = "default"
	// SchedulerName is the schedulerName of the queue-scheduler profile: pods that name it are
	// scheduled through queues.
	SchedulerName = "queue-scheduler"

	// RootQueue is the implicit parent of every queue without spec.parent. It is not a submission target.
	RootQueue = "root"
)
