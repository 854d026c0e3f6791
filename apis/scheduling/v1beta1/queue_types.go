package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// QueueState is the state of a queue. Users ask for Open, Closed or Suspended in spec.state; the
// controller reports the state in force, which may also be Closing or Unknown, in status.state.
type QueueState string

const (
	// QueueStateOpen accepts new work and schedules its pods.
	QueueStateOpen QueueState = "Open"
	// QueueStateClosing was asked to close while live work remains: it accepts no new work, and its
	// existing pods are still scheduled until they finish.
	QueueStateClosing QueueState = "Closing"
	// QueueStateClosed accepts no new work and holds none; only now can the queue be deleted.
	QueueStateClosed QueueState = "Closed"
	// QueueStateSuspended accepts new work but allocates nothing new: pending pods wait, running pods
	// keep running.
	QueueStateSuspended QueueState = "Suspended"
	// QueueStateUnknown cannot be determined (for example its parent is missing): no new work.
	QueueStateUnknown QueueState = "Unknown"
)

// Guarantee is the part of the cluster reserved for a queue. It is written either as capability is,
// a quantity per resource (guarantee: {cpu: 8}), or nested under resource, as Volcano's Queue writes
// it (guarantee: {resource: {cpu: 8}}); one guarantee takes one form. A missing resource is 0.
// +kubebuilder:pruning:PreserveUnknownFields
type Guarantee struct {
	// resource is the minimum reserved for the queue, per resource, in the nested form; a missing
	// resource is 0.
	// +optional
	// +kubebuilder:validation:MaxProperties=16
	// +kubebuilder:validation:XValidation:rule="self.all(k, isQuantity(string(self[k])) && !quantity(string(self[k])).isLessThan(quantity('0')))",messageExpression="'\"' + string(self[self.filter(k, !isQuantity(string(self[k])) || quantity(string(self[k])).isLessThan(quantity('0')))[0]]) + '\" is not a quantity of at least 0 for ' + self.filter(k, !isQuantity(string(self[k])) || quantity(string(self[k])).isLessThan(quantity('0')))[0] + ' (examples: 8, 500m, 16Gi)'"
	Resource corev1.ResourceList `json:"resource,omitempty"`

	// Form is how the guarantee was written, so that it is encoded back in its owner's form; it is
	// no field of the API.
	Form GuaranteeForm `json:"-"`
}

// QueueSpec is what a queue's owner asks for.
type QueueSpec struct {
	// weight is the queue's share of its parent's resources relative to its siblings.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Weight int32 `json:"weight,omitempty"`

	// capability is the most the queue may use, per resource; a missing resource is unlimited.
	// +optional
	// +kubebuilder:validation:MaxProperties=16
	// +kubebuilder:validation:XValidation:rule="self.all(k, isQuantity(string(self[k])) && !quantity(string(self[k])).isLessThan(quantity('0')))",messageExpression="'\"' + string(self[self.filter(k, !isQuantity(string(self[k])) || quantity(string(self[k])).isLessThan(quantity('0')))[0]]) + '\" is not a quantity of at least 0 for ' + self.filter(k, !isQuantity(string(self[k])) || quantity(string(self[k])).isLessThan(quantity('0')))[0] + ' (examples: 8, 500m, 16Gi)'"
	Capability corev1.ResourceList `json:"capability,omitempty"`

	// guarantee is the minimum reserved for the queue: a quantity per resource, as capability, or
	// nested under resource.
	// +optional
	Guarantee Guarantee `json:"guarantee,omitempty"`

	// reclaimable says whether other queues may take back what this queue borrowed beyond its share.
	// +optional
	// +kubebuilder:default=true
	Reclaimable *bool `json:"reclaimable,omitempty"`

	// parent is the name of the parent queue; empty means the implicit root.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Parent string `json:"parent,omitempty"`

	// priority orders queues that are otherwise equal; higher goes first.
	// +optional
	Priority int32 `json:"priority,omitempty"`

	// namespaceSelector selects the namespaces whose work (pods, PodGroups, QueueUnits) the queue
	// accepts and whose Commands may operate it. A queue without a selector accepts no namespace's
	// work; an empty selector ({}) accepts every namespace.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`

	// state is the state the owner asks for: Open, Closed or Suspended.
	// +optional
	// +kubebuilder:default=Open
	// +kubebuilder:validation:Enum=Open;Closed;Suspended
	State QueueState `json:"state,omitempty"`

	// defaultActiveDeadlineSeconds is the runtime limit of the queue's pods that set no
	// activeDeadlineSeconds and whose Job sets none: the admission webhook writes it into such a
	// pod's spec.activeDeadlineSeconds as the pod is created, so that the kubelet ends the pod by it.
	// It lets the scheduler plan when reserved room frees up (docs/backfill.md). Absent, such pods
	// have no bound, and neither has a pod that came past the webhook.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=2147483647
	DefaultActiveDeadlineSeconds *int64 `json:"defaultActiveDeadlineSeconds,omitempty"`
}

// QueueStatus is the observed state of a queue, written by the embedded controller.
type QueueStatus struct {
	// state is the state in force: Open, Closing, Closed, Suspended or Unknown.
	// +optional
	// +kubebuilder:validation:Enum=Open;Closing;Closed;Suspended;Unknown
	State QueueState `json:"state,omitempty"`

	// pending counts PodGroups not yet admitted to the queue.
	// +optional
	Pending int32 `json:"pending"`
	// inqueue counts PodGroups admitted whose pods are not yet running.
	// +optional
	Inqueue int32 `json:"inqueue"`
	// running counts PodGroups with at least minMember pods running.
	// +optional
	Running int32 `json:"running"`
	// completed counts finished PodGroups.
	// +optional
	Completed int32 `json:"completed"`
	// unknown counts PodGroups whose running members fell below minMember.
	// +optional
	Unknown int32 `json:"unknown"`

	// runningPods counts the queue's live pods bound to a node, with or without a PodGroup.
	// +optional
	RunningPods int32 `json:"runningPods"`
	// pendingPods counts the queue's live pods not bound yet.
	// +optional
	PendingPods int32 `json:"pendingPods"`

	// enqueued counts QueueUnits waiting in the queue.
	// +optional
	Enqueued int32 `json:"enqueued"`
	// dequeued counts QueueUnits admitted by the queue.
	// +optional
	Dequeued int32 `json:"dequeued"`

	// allocated is what the queue's bound pods request.
	// +optional
	Allocated corev1.ResourceList `json:"allocated,omitempty"`
	// deserved is the queue's current fair share.
	// +optional
	Deserved corev1.ResourceList `json:"deserved,omitempty"`
	// usage is the queue's decayed usage as last checkpointed: the scheduler resumes from it after
	// a restart or a change of leader.
	// +optional
	Usage *UsageCheckpoint `json:"usage,omitempty"`
	// runtimes is how long the queue's finished work ran, by kind of job, as last checkpointed: the
	// forecast of when pending work starts resumes from it after a restart or a change of leader.
	// +optional
	Runtimes *RuntimesCheckpoint `json:"runtimes,omitempty"`

	// conditions describe the queue's state in detail.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// observedGeneration is the spec generation this status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// UsageCheckpoint is a queue's decayed usage at a moment (docs/fairness.md).
type UsageCheckpoint struct {
	// resourceSeconds is what the queue's own pods held, by resource, in resource-seconds (a core
	// for a second is 1, 2Gi of memory for a second 2Gi), each second counting half after the
	// configured half-life. The queues below it keep their own.
	// +optional
	ResourceSeconds corev1.ResourceList `json:"resourceSeconds,omitempty"`
	// effectiveWeight is, per resource, the weight the usage gives the queue among its siblings in
	// dividing what is left above the guarantees; a resource not listed divides by spec.weight.
	// +optional
	EffectiveWeight corev1.ResourceList `json:"effectiveWeight,omitempty"`
	// time is when the usage stood at resourceSeconds.
	Time metav1.Time `json:"time"`
}

// RuntimesCheckpoint is how long a queue's finished work ran, by kind of job, at a moment: for each
// kind, the decayed count of runs in each bucket of runtimes (docs/visibility.md).
type RuntimesCheckpoint struct {
	// kinds are the kinds of job that finished in the queue: Job, PyTorchJob, Pod...
	// +optional
	// +listType=map
	// +listMapKey=kind
	// +kubebuilder:validation:MaxItems=32
	Kinds []KindRuntimes `json:"kinds,omitempty"`
	// time is when the counts stood so.
	Time metav1.Time `json:"time"`
}

// KindRuntimes is how long the runs of one kind of job in a queue took.
type KindRuntimes struct {
	// kind is the kind of job.
	// +kubebuilder:validation:MaxLength=253
	Kind string `json:"kind"`
	// buckets are the runtimes' buckets that hold runs: bucket i holds the runs of 1.25^i to
	// 1.25^(i+1) seconds.
	// +listType=map
	// +listMapKey=bucket
	// +kubebuilder:validation:MaxItems=84
	Buckets []RuntimeBucket `json:"buckets"`
	// shapes are the runs of the kind by shape, for the shapes learned: what a pod asks for and the
	// bucket of its runtime bound, which pods of one job share. The runs are in buckets too.
	// +optional
	// +listType=map
	// +listMapKey=shape
	// +kubebuilder:validation:MaxItems=64
	Shapes []ShapeRuntimes `json:"shapes,omitempty"`
}

// ShapeRuntimes is how long the runs of one shape of a kind of job in a queue took.
type ShapeRuntimes struct {
	// shape names what the pods asked for and how long they could run.
	// +kubebuilder:validation:MaxLength=1024
	Shape string `json:"shape"`
	// buckets are the runtimes' buckets that hold runs, as the kind's are.
	// +listType=map
	// +listMapKey=bucket
	// +kubebuilder:validation:MaxItems=84
	Buckets []RuntimeBucket `json:"buckets"`
}

// RuntimeBucket is the decayed count of runs in one bucket of runtimes, in thousandths of a run, and
// their mean runtime.
type RuntimeBucket struct {
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=83
	Bucket int32 `json:"bucket"`
	// +kubebuilder:validation:Minimum=0
	MilliRuns int64 `json:"milliRuns"`
	// meanMilliseconds is the mean runtime of the bucket's runs, in milliseconds; absent, the
	// bucket's middle.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MeanMilliseconds int64 `json:"meanMilliseconds,omitempty"`
}

// Queue is a share of the cluster for a team: a weight, a guaranteed minimum, a hard maximum and a
// state that decides whether it accepts and schedules work.
//
// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=q,categories=queue-scheduler
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.state`
// +kubebuilder:printcolumn:name="Weight",type=integer,JSONPath=`.spec.weight`
// +kubebuilder:printcolumn:name="Parent",type=string,JSONPath=`.spec.parent`
// +kubebuilder:printcolumn:name="Running Pods",type=integer,JSONPath=`.status.runningPods`,description="live pods bound to a node"
// +kubebuilder:printcolumn:name="Pending Pods",type=integer,JSONPath=`.status.pendingPods`,description="live pods not bound yet"
// +kubebuilder:printcolumn:name="Pending",type=integer,JSONPath=`.status.pending`,description="PodGroups not yet admitted"
// +kubebuilder:printcolumn:name="Running",type=integer,JSONPath=`.status.running`,description="PodGroups with minMember pods running"
// +kubebuilder:printcolumn:name="Inqueue",type=integer,JSONPath=`.status.inqueue`,priority=1,description="PodGroups admitted, not yet running"
// +kubebuilder:printcolumn:name="Enqueued",type=integer,JSONPath=`.status.enqueued`,priority=1,description="QueueUnits waiting"
// +kubebuilder:printcolumn:name="Dequeued",type=integer,JSONPath=`.status.dequeued`,priority=1,description="QueueUnits admitted"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="!has(self.spec.parent) || self.spec.parent != self.metadata.name",message="spec.parent must not name the queue itself"
// +kubebuilder:validation:XValidation:rule="self.metadata.name != 'root' || !has(self.spec.parent) || size(self.spec.parent) == 0",message="the root queue has no parent"
type Queue struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is what the queue's owner asks for.
	// +optional
	Spec QueueSpec `json:"spec,omitempty"`
	// status is what the controller observes.
	// +optional
	Status QueueStatus `json:"status,omitempty"`
}

// QueueList is a list of queues.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type QueueList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the queues.
	Items []Queue `json:"items"`
}
