// Package v1alpha1 holds the command bus of queue-scheduler: Commands that operators send to queues.
//
// +k8s:deepcopy-gen=package
// +groupName=bus.queue-scheduler.io
// +kubebuilder:object:generate=true
package v1alpha1
