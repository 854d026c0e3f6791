// Package v1beta1 holds the live view of queue-scheduler, served by every scheduler replica through
// the aggregation layer of the API server from what the scheduler holds in memory: QueueSummary (a
// queue's state, share and usage) and PendingWorkload (the work waiting in a queue, in the order the
// scheduler takes it, with its position and why it waits). Nothing of it is stored.
//
// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +groupName=visibility.queue-scheduler.io
// +kubebuilder:skip
package v1beta1
