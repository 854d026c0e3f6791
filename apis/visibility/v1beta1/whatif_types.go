package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

// WhatIf asks how the queues' fair shares, and the expected starts of the pending work of its
// namespace, would change with a change that is not made: new work submitted to the namespace, or
// queues of another weight, guarantee, capability, reclaimability or state. It is answered on the
// scheduler's state at the request, in its status, and neither stored nor acted on: creating one
// changes nothing in the cluster. Its namespace is the one asked about.
//
// +genclient
// +genclient:onlyVerbs=create
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type WhatIf struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the change asked about.
	Spec WhatIfSpec `json:"spec"`
	// Status is the answer.
	// +optional
	Status WhatIfStatus `json:"status,omitempty"`
}

// WhatIfSpec is a change of queues and work, not made.
type WhatIfSpec struct {
	// Queues change existing queues: each field set replaces the queue's own.
	// +optional
	// +listType=map
	// +listMapKey=name
	Queues []QueueChange `json:"queues,omitempty"`
	// Workloads are new work submitted to the namespace.
	// +optional
	// +listType=map
	// +listMapKey=name
	Workloads []NewWorkload `json:"workloads,omitempty"`
}

// QueueChange is a queue with some of its spec changed; a field left out keeps the queue's own.
type QueueChange struct {
	// Name is the queue's.
	Name string `json:"name"`
	// +optional
	Weight *int32 `json:"weight,omitempty"`
	// +optional
	Guarantee corev1.ResourceList `json:"guarantee,omitempty"`
	// +optional
	Capability corev1.ResourceList `json:"capability,omitempty"`
	// +optional
	Reclaimable *bool `json:"reclaimable,omitempty"`
	// State is Open, Closed or Suspended.
	// +optional
	State schedulingv1beta1.QueueState `json:"state,omitempty"`
}

// NewWorkload is a job to be submitted: Pods pods alike, as Template makes each.
type NewWorkload struct {
	// Name names it in the answer: a DNS subdomain, unique among the workloads.
	Name string `json:"name"`
	// Kind is the kind of job it is (Job, PyTorchJob...), by which runtimes are learned; Pod when
	// empty.
	// +optional
	Kind string `json:"kind,omitempty"`
	// Queue is the queue it is submitted to; when empty, its pods' queue as the scheduler resolves it:
	// the template's queue label, else the namespace's queue annotation, else "default".
	// +optional
	Queue string `json:"queue,omitempty"`
	// Pods is how many pods it runs, 1 to 10000.
	Pods int32 `json:"pods"`
	// Gang says whether its pods start together or not at all.
	// +optional
	Gang bool `json:"gang,omitempty"`
	// Template is each pod, as the API server admits it: its requests (defaulted from its limits),
	// the priority of its priorityClassName, its node selector, affinity and tolerations, and its
	// activeDeadlineSeconds (its runtime bound; the queue's default when it has none) are read.
	Template corev1.PodTemplateSpec `json:"template"`
}

// WhatIfStatus is the answer to a WhatIf: the fair shares and the expected starts, as they are and
// as they would be, from one snapshot of the scheduler's state.
type WhatIfStatus struct {
	// ForecastTime is the moment of the snapshot.
	ForecastTime metav1.Time `json:"forecastTime"`
	// Queues are the fair shares, as they are and as they would be, of the queues that take the
	// namespace's work (now or with the change), of the queues above them, and of those the change
	// names.
	// +optional
	Queues []QueueShareChange `json:"queues,omitempty"`
	// Workloads are the pending work of the namespace, in its queues' order, and then the new work:
	// when each is expected to start, as it is and as it would be.
	// +optional
	Workloads []WorkloadStartChange `json:"workloads,omitempty"`
}

// QueueShareChange is a queue's fair share and the part of it the queue holds, now and with the
// change.
type QueueShareChange struct {
	Name string `json:"name"`
	// Deserved is its fair share now; DeservedIf, with the change.
	// +optional
	Deserved corev1.ResourceList `json:"deserved,omitempty"`
	// +optional
	DeservedIf corev1.ResourceList `json:"deservedIf,omitempty"`
	// Share is its dominant share now, as a QueueSummary's; ShareIf, with the change.
	Share   string `json:"share"`
	ShareIf string `json:"shareIf"`
}

// WorkloadStartChange is when a piece of work is expected to start, now and with the change.
type WorkloadStartChange struct {
	// Workload is what waits; for new work, of kind NewWorkload and the workload's name.
	Workload WorkloadReference `json:"workload"`
	// Queue is the queue it waits in.
	Queue string `json:"queue"`
	// Start is its expected start now; absent for new work.
	// +optional
	Start *ExpectedStart `json:"start,omitempty"`
	// StartIf is its expected start with the change; absent for work the change refuses.
	// +optional
	StartIf *ExpectedStart `json:"startIf,omitempty"`
	// Refused says why the change would refuse new work: its queue closed, a queue that does not
	// take work from the namespace, or a gang above its queue's capability.
	// +optional
	Refused string `json:"refused,omitempty"`
}
