package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Action is what a Command asks of its target queue.
// +kubebuilder:validation:Enum=OpenQueue;CloseQueue;SuspendQueue;ResumeQueue
type Action string

const (
	// OpenQueue sets the queue's spec.state to Open.
	OpenQueue Action = "OpenQueue"
	// CloseQueue sets the queue's spec.state to Closed.
	CloseQueue Action = "CloseQueue"
	// SuspendQueue sets the queue's spec.state to Suspended.
	SuspendQueue Action = "SuspendQueue"
	// ResumeQueue sets a Suspended queue's spec.state back to Open.
	ResumeQueue Action = "ResumeQueue"
)

// Target names the object a Command acts on.
type Target struct {
	// apiVersion of the target; scheduling.queue-scheduler.io/v1beta1 for queues.
	// +kubebuilder:default="scheduling.queue-scheduler.io/v1beta1"
	// +kubebuilder:validation:Enum="scheduling.queue-scheduler.io/v1beta1"
	APIVersion string `json:"apiVersion,omitempty"`
	// kind of the target; Queue.
	// +kubebuilder:default=Queue
	// +kubebuilder:validation:Enum=Queue
	Kind string `json:"kind,omitempty"`
	// name of the target.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// CommandSpec is one instruction to a queue.
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable"
type CommandSpec struct {
	// action is what to do: OpenQueue, CloseQueue, SuspendQueue or ResumeQueue.
	Action Action `json:"action"`
	// target is the queue to act on.
	Target Target `json:"target"`
	// reason is a short, machine-readable cause, recorded on the queue's Event.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Reason string `json:"reason,omitempty"`
	// message is a human-readable explanation, recorded on the queue's Event.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
}

// Command asks the controller to change a queue's state. It is applied exactly once, recorded as an
// Event on the queue, and then deleted.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=qcmd,categories=queue-scheduler
// +kubebuilder:printcolumn:name="Action",type=string,JSONPath=`.spec.action`
// +kubebuilder:printcolumn:name="Target",type=string,JSONPath=`.spec.target.name`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Command struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the instruction.
	Spec CommandSpec `json:"spec"`
}

// CommandList is a list of Commands.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type CommandList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the Commands.
	Items []Command `json:"items"`
}
