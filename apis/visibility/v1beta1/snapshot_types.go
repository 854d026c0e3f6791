package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CurrentSnapshot is the name of the one ForecastSnapshot: the scheduler's state now.
const CurrentSnapshot = "current"

// ForecastSnapshot is what a forecast of the expected starts is played from, and what it predicts:
// the nodes with their running pods and when each is expected to end, the queues, the pending work
// in the scheduler's order with the runtime each piece is expected to run, the gangs' reservations,
// and each piece's expected start. Its one object, named "current", is the scheduler's state at the
// request, forecast then; it is read, never stored. Its times are to the microsecond. `queuesim replay` plays it with the real
// scheduler, to compare the forecast with what the scheduler then does.
//
// +genclient
// +genclient:nonNamespaced
// +genclient:onlyVerbs=get
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type ForecastSnapshot struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// ForecastTime is the moment the snapshot holds.
	ForecastTime metav1.MicroTime `json:"forecastTime"`
	// Resolution is the step the forecast rounds ends up to, and plays together.
	Resolution metav1.Duration `json:"resolution"`
	// Resources are the resources the forecast counts: those the pending work asks for.
	Resources []corev1.ResourceName `json:"resources"`
	// Nodes are the schedulable nodes, by name.
	// +optional
	Nodes []SnapshotNode `json:"nodes,omitempty"`
	// Queues are every queue, the root included.
	// +optional
	Queues []SnapshotQueue `json:"queues,omitempty"`
	// Pending is the work that waits, in the scheduler's order.
	// +optional
	Pending []SnapshotWork `json:"pending,omitempty"`
	// Reservations are the room the waiting gangs are promised.
	// +optional
	Reservations []SnapshotReservation `json:"reservations,omitempty"`
}

// SnapshotNode is a node: what it offers of the forecast's resources, and its running pods.
type SnapshotNode struct {
	Name string `json:"name"`
	// Allocatable is what the node offers, of the snapshot's resources.
	Allocatable corev1.ResourceList `json:"allocatable"`
	// Unschedulable says the node is cordoned: it takes no new pods.
	// +optional
	Unschedulable bool `json:"unschedulable,omitempty"`
	// Running are the pods on it.
	// +optional
	Running []SnapshotPod `json:"running,omitempty"`
}

// SnapshotPod is a running pod: its queue, what it holds, and when it is expected to end.
type SnapshotPod struct {
	// Queue is the queue it runs in; empty for another scheduler's pod.
	// +optional
	Queue string `json:"queue,omitempty"`
	// Requests is what it holds, of the snapshot's resources.
	Requests corev1.ResourceList `json:"requests"`
	// EndP50 is its expected end with its runtime at its central value, EndP90 at its 90th
	// percentile; absent when it is not expected to end.
	// +optional
	EndP50 *metav1.MicroTime `json:"endP50,omitempty"`
	// +optional
	EndP90 *metav1.MicroTime `json:"endP90,omitempty"`
}

// SnapshotQueue is a queue as the forecast reads it.
type SnapshotQueue struct {
	Name string `json:"name"`
	// Parent is the queue above; empty for the root.
	// +optional
	Parent string `json:"parent,omitempty"`
	Weight int32  `json:"weight"`
	// +optional
	Guarantee corev1.ResourceList `json:"guarantee,omitempty"`
	// +optional
	Capability corev1.ResourceList `json:"capability,omitempty"`
	// Reclaimable says whether what it borrows may be taken back.
	Reclaimable bool `json:"reclaimable"`
	// +optional
	Suspended bool `json:"suspended,omitempty"`
}

// SnapshotWork is a pending pod, gang or QueueUnit.
type SnapshotWork struct {
	Workload  WorkloadReference `json:"workload"`
	Namespace string            `json:"namespace"`
	Queue     string            `json:"queue"`
	// Priority and Since place it in the scheduler's order: higher priority first, then the earlier
	// to enter its queue.
	Priority int32            `json:"priority"`
	Since    metav1.MicroTime `json:"since"`
	// Members are its pods, which start together, alike ones counted together; a QueueUnit whose
	// pods are not created yet is one member asking for all its job does.
	Members []SnapshotMembers `json:"members"`
	// Runtime is how long it is expected to run once started.
	Runtime RuntimeEstimate `json:"runtime"`
	// Bound is how long it may run at the most, by its pods' runtime bounds; absent for no bound.
	// +optional
	Bound *metav1.Duration `json:"bound,omitempty"`
	// Start is the start the forecast expects.
	Start SnapshotStart `json:"start"`
}

// SnapshotStart is a piece of work's expected start, with the runtimes at their central value and
// at their 90th percentile; each absent when it does not start within the forecast's horizon.
type SnapshotStart struct {
	// +optional
	P50 *metav1.MicroTime `json:"p50,omitempty"`
	// +optional
	P90 *metav1.MicroTime `json:"p90,omitempty"`
}

// SnapshotMembers are Count pods of a piece of work alike: what each asks for, and where it may run.
type SnapshotMembers struct {
	Count    int32               `json:"count"`
	Requests corev1.ResourceList `json:"requests"`
	// Nodes, when set, are the only nodes they may run on (by their node selector, affinity and
	// tolerations); absent, any, unless NoNode.
	// +optional
	Nodes []string `json:"nodes,omitempty"`
	// NoNode says no node takes them.
	// +optional
	NoNode bool `json:"noNode,omitempty"`
}

// RuntimeEstimate is a run's length at its central value and at its 90th percentile.
type RuntimeEstimate struct {
	P50 metav1.Duration `json:"p50"`
	P90 metav1.Duration `json:"p90"`
}

// SnapshotReservation is room a waiting gang is promised from Start.
type SnapshotReservation struct {
	// Workload is the gang's.
	Workload  WorkloadReference `json:"workload"`
	Namespace string            `json:"namespace"`
	Start     metav1.MicroTime  `json:"start"`
	Nodes     []SnapshotHeld    `json:"nodes"`
}

// SnapshotHeld is a reservation's room on one node.
type SnapshotHeld struct {
	Node   string              `json:"node"`
	Amount corev1.ResourceList `json:"amount"`
}
