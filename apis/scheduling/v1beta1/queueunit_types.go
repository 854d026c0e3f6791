package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// QueueUnitPhase is where a QueueUnit is in its queue.
// +kubebuilder:validation:Enum=Enqueued;Dequeued
type QueueUnitPhase string

const (
	// QueueUnitEnqueued waits in its queue; the consumer's pods are held.
	QueueUnitEnqueued QueueUnitPhase = "Enqueued"
	// QueueUnitDequeued was admitted by its queue; the consumer's pods may be scheduled.
	QueueUnitDequeued QueueUnitPhase = "Dequeued"
)

// QueueUnitSpec puts one job of any kind in a queue.
type QueueUnitSpec struct {
	// consumerRef names the job this unit queues (a Job, TFJob, PyTorchJob, MPIJob, RayJob...).
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="consumerRef is immutable"
	// +kubebuilder:validation:XValidation:rule="has(self.kind) && self.kind != '' && has(self.name) && self.name != ''",message="consumerRef needs kind and name"
	ConsumerRef corev1.ObjectReference `json:"consumerRef"`

	// queue names the queue; empty means the namespace's queue annotation, else "default".
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="queue is immutable"
	Queue string `json:"queue,omitempty"`

	// priority orders units within the queue; higher goes first. It may change while Enqueued.
	// +optional
	Priority *int32 `json:"priority,omitempty"`

	// priorityClassName gives the priority when priority is not set. It may change while Enqueued.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	PriorityClassName string `json:"priorityClassName,omitempty"`

	// resource is the total request of the job.
	// +optional
	// +kubebuilder:validation:MaxProperties=16
	// +kubebuilder:validation:XValidation:rule="self.all(k, isQuantity(string(self[k])) && !quantity(string(self[k])).isLessThan(quantity('0')))",messageExpression="'\"' + string(self[self.filter(k, !isQuantity(string(self[k])) || quantity(string(self[k])).isLessThan(quantity('0')))[0]]) + '\" is not a quantity of at least 0 for ' + self.filter(k, !isQuantity(string(self[k])) || quantity(string(self[k])).isLessThan(quantity('0')))[0] + ' (examples: 8, 500m, 16Gi)'"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="resource is immutable"
	Resource corev1.ResourceList `json:"resource,omitempty"`
}

// QueueUnitStatus is the observed state of a QueueUnit.
type QueueUnitStatus struct {
	// phase is Enqueued until the queue admits the unit, then Dequeued.
	// +optional
	Phase QueueUnitPhase `json:"phase,omitempty"`
	// message says why the unit still waits, or when it was admitted.
	// +optional
	Message string `json:"message,omitempty"`
	// conditions describe the unit's state in detail: ExpectedStart while it waits.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// QueueUnitExpectedStart is the condition of a unit that waits: when it is expected to start (see
// PodGroupExpectedStart).
const QueueUnitExpectedStart = "ExpectedStart"

// QueueUnit is the queueing record of one job of any kind.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=qu,categories=queue-scheduler
// +kubebuilder:printcolumn:name="Queue",type=string,JSONPath=`.spec.queue`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Priority",type=integer,JSONPath=`.spec.priority`
// +kubebuilder:printcolumn:name="Kind",type=string,JSONPath=`.spec.consumerRef.kind`
// +kubebuilder:printcolumn:name="Consumer",type=string,JSONPath=`.spec.consumerRef.name`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.phase) || oldSelf.status.phase != 'Dequeued' || self.spec == oldSelf.spec",message="spec is immutable: the QueueUnit was already Dequeued (an update that arrives after the dequeue is refused)",fieldPath=".spec"
type QueueUnit struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec describes the queued job.
	Spec QueueUnitSpec `json:"spec"`
	// status is what the controller observes.
	// +optional
	Status QueueUnitStatus `json:"status,omitempty"`
}

// QueueUnitList is a list of QueueUnits.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type QueueUnitList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the QueueUnits.
	Items []QueueUnit `json:"items"`
}
