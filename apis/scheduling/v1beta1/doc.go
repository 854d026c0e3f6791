// Package v1beta1 holds the queueing API of queue-scheduler: Queue, PodGroup and QueueUnit.
//
// +k8s:deepcopy-gen=package
// +groupName=scheduling.queue-scheduler.io
// +kubebuilder:object:generate=true
package v1beta1
