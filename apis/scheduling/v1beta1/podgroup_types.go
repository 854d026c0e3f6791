package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodGroupPhase is where a PodGroup is on its way through its queue.
// +kubebuilder:validation:Enum=Pending;Inqueue;Running;Completed;Unknown
type PodGroupPhase string

const (
	// PodGroupPending is not yet admitted to its queue.
	PodGroupPending PodGroupPhase = "Pending"
	// PodGroupInqueue is admitted to its queue; its pods may be scheduled.
	PodGroupInqueue PodGroupPhase = "Inqueue"
	// PodGroupRunning has at least minMember pods running.
	PodGroupRunning PodGroupPhase = "Running"
	// PodGroupCompleted has finished.
	PodGroupCompleted PodGroupPhase = "Completed"
	// PodGroupUnknown had its running members fall below minMember.
	PodGroupUnknown PodGroupPhase = "Unknown"
)

// PodGroupNotAdmitted is the reason of a Pending PodGroup's Unschedulable condition while its
// minResources do not fit its queue.
const PodGroupNotAdmitted = "NotAdmitted"

// PodGroup condition types.
const (
	// PodGroupUnschedulable is true while the gang cannot be placed, with a message such as
	// "3/5 tasks in gang unschedulable: ...".
	PodGroupUnschedulable = "Unschedulable"
	// PodGroupScheduled is true once minMember pods were bound.
	PodGroupScheduled = "Scheduled"
	// PodGroupReserved is true while the group holds a reservation (the Backfill plugin): its
	// message names the start and the nodes.
	PodGroupReserved = "Reserved"
	// PodGroupExpectedStart is the forecast of when a waiting group starts: true with the expected
	// start at the median and the 90th percentile in its message, false when it is not expected to
	// start within the forecast's horizon. It is written when the forecast moves by more than a
	// tenth of the wait (a minute at least), and removed once the group no longer waits.
	PodGroupExpectedStart = "ExpectedStart"
)

// PodGroupSpec is a gang: pods scheduled all or nothing.
type PodGroupSpec struct {
	// minMember is how many pods must be placed together before any is bound.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	MinMember int32 `json:"minMember,omitempty"`

	// minResources is what the gang needs to start; it is checked against the queue before its pods
	// are scheduled.
	// +optional
	// +kubebuilder:validation:MaxProperties=16
	// +kubebuilder:validation:XValidation:rule="self.all(k, isQuantity(string(self[k])) && !quantity(string(self[k])).isLessThan(quantity('0')))",messageExpression="'\"' + string(self[self.filter(k, !isQuantity(string(self[k])) || quantity(string(self[k])).isLessThan(quantity('0')))[0]]) + '\" is not a quantity of at least 0 for ' + self.filter(k, !isQuantity(string(self[k])) || quantity(string(self[k])).isLessThan(quantity('0')))[0] + ' (examples: 8, 500m, 16Gi)'"
	MinResources corev1.ResourceList `json:"minResources,omitempty"`

	// minTaskMember is, per task, how many of the gang's pods of that task must be placed among
	// its minMember before any is bound (a parameter server and two workers, say). A pod names its
	// task with the label scheduling.queue-scheduler.io/task, or Volcano's annotation
	// volcano.sh/task-spec.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, self[k] >= 0)",message="task minimums must not be negative"
	MinTaskMember map[string]int32 `json:"minTaskMember,omitempty"`

	// queue names the queue; empty means the namespace's queue annotation, else "default".
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="queue is immutable"
	Queue string `json:"queue,omitempty"`

	// priorityClassName gives the gang's priority.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	PriorityClassName string `json:"priorityClassName,omitempty"`

	// scheduleTimeoutSeconds bounds how long reserved members wait for the rest of the gang.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ScheduleTimeoutSeconds *int32 `json:"scheduleTimeoutSeconds,omitempty"`
}

// PodGroupStatus is the observed state of a PodGroup.
type PodGroupStatus struct {
	// phase is where the group is on its way through its queue.
	// +optional
	Phase PodGroupPhase `json:"phase,omitempty"`
	// running counts member pods running.
	// +optional
	Running int32 `json:"running,omitempty"`
	// succeeded counts member pods that succeeded.
	// +optional
	Succeeded int32 `json:"succeeded,omitempty"`
	// failed counts member pods that failed.
	// +optional
	Failed int32 `json:"failed,omitempty"`
	// conditions describe why the group waits or that it was scheduled.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// observedGeneration is the spec generation this status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// PodGroup groups pods that must be scheduled together (a gang) and ties them to a queue.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=pg,categories=queue-scheduler
// +kubebuilder:printcolumn:name="Queue",type=string,JSONPath=`.spec.queue`
// +kubebuilder:printcolumn:name="MinMember",type=integer,JSONPath=`.spec.minMember`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Running",type=integer,JSONPath=`.status.running`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type PodGroup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec describes the gang.
	// +optional
	Spec PodGroupSpec `json:"spec,omitempty"`
	// status is what the controller observes.
	// +optional
	Status PodGroupStatus `json:"status,omitempty"`
}

// PodGroupList is a list of PodGroups.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type PodGroupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the PodGroups.
	Items []PodGroup `json:"items"`
}
