package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of the live view.
const GroupName = "visibility.queue-scheduler.io"

// SchemeGroupVersion is the group and version of the types in this package.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1beta1"}

// Resource names of the live view.
const (
	// QueueSummaries is the cluster-scoped resource of QueueSummary; its subresource
	// PendingWorkloads lists the queue's pending work in every namespace.
	QueueSummaries = "queuesummaries"
	// PendingWorkloads is the namespaced resource of PendingWorkload, and the subresource of a
	// QueueSummary.
	PendingWorkloads = "pendingworkloads"
	// WhatIfs is the namespaced resource of WhatIf, which is only created, and answered.
	WhatIfs = "whatifs"
	// ForecastSnapshots is the cluster-scoped resource of ForecastSnapshot, which is only read.
	ForecastSnapshots = "forecastsnapshots"
)

// Resource returns a GroupResource of this group for an unqualified resource name.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

var (
	// SchemeBuilder registers the types of this package with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds the types of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&QueueSummary{}, &QueueSummaryList{},
		&PendingWorkload{}, &PendingWorkloadList{},
		&WhatIf{},
		&ForecastSnapshot{},
	)
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
