package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

// QueueSummary is a queue as the scheduler holds it now: its place in the tree, state, share and
// usage, and the counts of its work. Its name is the queue's. Unlike the Queue's status, which is
// written at a pace, it is read from the scheduler's memory at each request.
//
// +genclient
// +genclient:nonNamespaced
// +genclient:onlyVerbs=get,list,watch
// +genclient:method=GetPendingWorkloads,verb=get,subresource=pendingworkloads,result=PendingWorkloadList
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type QueueSummary struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Parent is the queue's parent; empty for the root.
	Parent string `json:"parent,omitempty"`
	// State is the queue's state, as its status last reported it.
	State schedulingv1beta1.QueueState `json:"state,omitempty"`
	// Weight is the queue's weight among its siblings.
	Weight int32 `json:"weight"`
	// Reclaimable says whether what the queue borrows may be taken back.
	Reclaimable bool `json:"reclaimable"`
	// Guarantee is the least the queue is given when it asks for it.
	Guarantee corev1.ResourceList `json:"guarantee,omitempty"`
	// Capability is the most the queue may hold.
	Capability corev1.ResourceList `json:"capability,omitempty"`
	// Deserved is the queue's fair share now.
	Deserved corev1.ResourceList `json:"deserved,omitempty"`
	// Allocated is what the queue's bound pods hold.
	Allocated corev1.ResourceList `json:"allocated,omitempty"`
	// Requested is what the queue's pods not bound yet ask for.
	Requested corev1.ResourceList `json:"requested,omitempty"`
	// Share is the queue's dominant share: the largest fraction of its deserved amount of a
	// resource that it holds, with three decimals ("0.500"); "+Inf" when it holds what it does not
	// deserve at all.
	Share string `json:"share"`
	// RunningPods and PendingPods count the queue's live pods, bound and not yet bound.
	RunningPods int32 `json:"runningPods"`
	PendingPods int32 `json:"pendingPods"`
	// PodGroups counts the queue's PodGroups by phase.
	PodGroups PodGroupCounts `json:"podGroups"`
	// Enqueued and Dequeued count the queue's QueueUnits waiting to be dequeued, and dequeued.
	Enqueued int32 `json:"enqueued"`
	Dequeued int32 `json:"dequeued"`
	// Usage is the queue's decayed usage at UsageTime: what its pods and those of the queues below
	// it held, in resource-seconds, each counting half after the configured half-life. Absent when
	// the scheduler keeps no usage history.
	Usage corev1.ResourceList `json:"usage,omitempty"`
	// UsageTime is when the queue's usage stood at Usage: when the summary was last computed, at a
	// change of the queue, its work or its share, and at the latest at each checkpoint of its usage
	// into the Queue's status.
	UsageTime *metav1.Time `json:"usageTime,omitempty"`
	// EffectiveWeight is, per resource, the weight the usage gives the queue among its siblings in
	// dividing what is left above the guarantees; a resource not listed divides by Weight.
	EffectiveWeight corev1.ResourceList `json:"effectiveWeight,omitempty"`
}

// PodGroupCounts counts PodGroups by phase.
type PodGroupCounts struct {
	Pending   int32 `json:"pending"`
	Inqueue   int32 `json:"inqueue"`
	Running   int32 `json:"running"`
	Completed int32 `json:"completed"`
	Unknown   int32 `json:"unknown"`
}

// QueueSummaryList is a list of QueueSummary.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type QueueSummaryList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []QueueSummary `json:"items"`
}

// WorkloadKind names what a pending workload is.
type WorkloadKind string

const (
	// WorkloadPodGroup is a gang: its pods not bound yet, or the whole group while its queue has not
	// admitted it.
	WorkloadPodGroup WorkloadKind = "PodGroup"
	// WorkloadQueueUnit is a QueueUnit its queue has not dequeued yet.
	WorkloadQueueUnit WorkloadKind = "QueueUnit"
	// WorkloadPod is a pod of no gang, not bound yet.
	WorkloadPod WorkloadKind = "Pod"
	// WorkloadJob is a batch/v1 Job of queue-scheduler with no pod, whose pods admission refuses:
	// no queue counts it.
	WorkloadJob WorkloadKind = "Job"
	// WorkloadNew is new work a WhatIf asks about.
	WorkloadNew WorkloadKind = "NewWorkload"
)

// WorkloadReference names the object a pending workload stands for, in the workload's namespace.
type WorkloadReference struct {
	Kind WorkloadKind `json:"kind"`
	Name string       `json:"name"`
}

// PendingWorkload is one piece of work waiting in a queue. Its namespace is the work's; its name
// is the kind and the name of what it stands for ("podgroup.train", "pod.web-0"); its creation
// time is that object's.
//
// +genclient
// +genclient:onlyVerbs=list
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type PendingWorkload struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Workload is the PodGroup, QueueUnit or pod that waits.
	Workload WorkloadReference `json:"workload"`
	// Queue is the queue it waits in.
	Queue string `json:"queue"`
	// PositionInQueue is its place in the order the scheduler takes the queue's work: 1 is next.
	// Admitted work (pods and gangs that may be scheduled) comes first, by priority and then by
	// age, then the PodGroups and QueueUnits the queue has not admitted yet, in the order they are
	// admitted.
	PositionInQueue int32 `json:"positionInQueue"`
	// Priority is the work's priority.
	Priority int32 `json:"priority"`
	// Pods counts its pods not bound yet.
	Pods int32 `json:"pods"`
	// Requests is what it asks for: a gang's minResources while it is not admitted, else the
	// requests of its pods not bound yet.
	Requests corev1.ResourceList `json:"requests,omitempty"`
	// Reason and Message say why it waits, as its pods' PodScheduled condition, or its PodGroup's
	// or QueueUnit's status, say it.
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// Reservation is the room a waiting gang holds, when it holds some (the Backfill plugin).
	// +optional
	Reservation *Reservation `json:"reservation,omitempty"`
	// ExpectedStart is when it is expected to start, by the scheduling policy played forward from
	// the cluster's state; absent until the first forecast that includes it.
	// +optional
	ExpectedStart *ExpectedStart `json:"expectedStart,omitempty"`
}

// ExpectedStart is a forecast of when a piece of pending work starts: the scheduling policy (fair
// shares, capabilities, the order) played forward in simulated time from the running pods' ends,
// their runtime bounds or, without one, the runtimes learned from finished work of their queue and
// kind, with every runtime at its central value (P50: the mean of the runs learned, which a queue of
// many jobs takes each on average) and at its 90th percentile (P90).
type ExpectedStart struct {
	// P50 is the expected start, with the runtimes at their central value; absent when it does not
	// start within the forecast's horizon.
	// +optional
	P50 *metav1.Time `json:"p50,omitempty"`
	// P90 is the start with the 90th-percentile runtimes; absent when it does not start within the
	// forecast's horizon.
	// +optional
	P90 *metav1.Time `json:"p90,omitempty"`
	// ForecastTime is when the forecast was made.
	ForecastTime metav1.Time `json:"forecastTime"`
	// RuntimeBasis is what P50 rests on: what the runtime of the run whose end lets the work start
	// was read from (the weakest along the way, when that run started, in the forecast, at the end
	// of another). Absent when the start waits for no run's end: it can start now, or not within the
	// horizon.
	// +optional
	RuntimeBasis *RuntimeBasis `json:"runtimeBasis,omitempty"`
}

// RuntimeSource is what a runtime was read from.
// +enum
type RuntimeSource string

const (
	// RuntimeDefault is the default runtime (the configured forecastDefaultRuntime): nothing like the
	// run has finished yet, in its queue, of its kind or at all.
	RuntimeDefault RuntimeSource = "Default"
	// RuntimeOutlived is a run that has run longer than every run learned of its kind (or than the
	// default runtime), which therefore tell nothing of its end: it is taken to run as long again.
	RuntimeOutlived RuntimeSource = "Outlived"
	// RuntimeLearned is a runtime learned from finished runs (Runs of them, of LearnedFrom).
	RuntimeLearned RuntimeSource = "Learned"
	// RuntimeBounded is an end by the run's runtime bound (its pod's activeDeadlineSeconds, and
	// grace), or by its pod's deletion, before its runtime would end it: it ends by then at the
	// latest.
	RuntimeBounded RuntimeSource = "Bounded"
	// RuntimeKnown is a runtime told ahead of the run (a simulator's, which knows its pods').
	RuntimeKnown RuntimeSource = "Known"
)

// RuntimeScope is which finished work a learned runtime was read from: the closest that finished
// enough runs.
// +enum
type RuntimeScope string

const (
	// ScopeShape is the runs of the run's queue and kind whose pods had its shape (requests and
	// runtime bound).
	ScopeShape RuntimeScope = "Shape"
	// ScopeKind is the runs of the run's queue and kind, of every shape.
	ScopeKind RuntimeScope = "Kind"
	// ScopeQueue is the runs of the run's queue, of every kind.
	ScopeQueue RuntimeScope = "Queue"
	// ScopeKindInAnyQueue is the runs of the run's kind, in every queue.
	ScopeKindInAnyQueue RuntimeScope = "KindInAnyQueue"
	// ScopeAll is all the work that finished.
	ScopeAll RuntimeScope = "All"
)

// RuntimeBasis is what a runtime was read from, and for one learned, how much finished work it
// stands on.
type RuntimeBasis struct {
	// Source is what the runtime was read from: Default, Outlived, Learned, Bounded or Known.
	Source RuntimeSource `json:"source"`
	// Runs is, for a Learned or Outlived runtime, how many finished runs it was read from, each
	// counting half one half-life (a week) after it ended, rounded.
	// +optional
	Runs int32 `json:"runs,omitempty"`
	// LearnedFrom is, for a Learned or Outlived runtime, which finished work those runs were.
	// +optional
	LearnedFrom RuntimeScope `json:"learnedFrom,omitempty"`
}

// Reservation is the room a waiting gang is promised: from Start, on Nodes, until End.
type Reservation struct {
	// Start is when the room is free by the running pods' runtime bounds; at or before the time of
	// the plan when it is free already.
	Start metav1.Time `json:"start"`
	// End is when the gang's own runtime bound ends if it starts at Start; absent when the gang has
	// no bound.
	// +optional
	End *metav1.Time `json:"end,omitempty"`
	// Nodes are the nodes it is reserved on, by name.
	Nodes []string `json:"nodes"`
}

// PendingWorkloadList is a list of PendingWorkload, in the order the scheduler takes them.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type PendingWorkloadList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PendingWorkload `json:"items"`
}
