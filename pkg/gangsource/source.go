// Package gangsource reads the PodGroups of the other gang APIs — scheduler-plugins' coscheduling,
// Volcano and the native Workload API — for the controller, which mirrors each into a PodGroup of
// queue-scheduler's and writes the source's status back in the source's own terms. A source is
// watched only while the API server serves it: its served state is learnt from discovery at start,
// when a CustomResourceDefinition changes, and every minute for the built-in API.
package gangsource

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

// resource is the name of every source's PodGroup resource.
const resource = "podgroups"

// Source is one API of PodGroups that queue-scheduler mirrors into its own.
type Source interface {
	// Name names the source as QueueState's gangSources does.
	Name() schedulingv1beta1.GangSource
	// GroupVersionKind is the kind of the source's PodGroups.
	GroupVersionKind() schema.GroupVersionKind
	// newInformer builds the informer of the source's PodGroups; it is started once the API is served.
	newInformer() cache.SharedIndexInformer
	// Mirror is what queue-scheduler's PodGroup standing for obj holds: its spec, whose queue
	// names one of queue-scheduler's queues (empty: the namespace's).
	Mirror(obj metav1.Object) schedulingv1beta1.PodGroupSpec
	// Eager says whether obj is queue-scheduler's before any pod of queue-scheduler names it. A
	// PodGroup that is not waits for one: the API may be shared with other schedulers.
	Eager(obj metav1.Object) bool
	// WriteStatus writes obj's status from its mirror, in the source's own phases and conditions,
	// when it differs.
	WriteStatus(ctx context.Context, obj metav1.Object, mirror Mirror) error
}

// Mirror is what a source's status is computed from.
type Mirror struct {
	// PodGroup is queue-scheduler's PodGroup standing for the source's; nil when there is none.
	PodGroup *schedulingv1beta1.PodGroup
	// Queue names PodGroup's queue.
	Queue string
	// Members are the gang's pods, finished ones included.
	Members []*corev1.Pod
	// Refusal says why no mirror stands for the source's PodGroup ("" when one does).
	Refusal string
	// Now is the time on the scheduler's clock the status is written at: the time of a condition's
	// transition, of a schedule's start.
	Now time.Time
}

// OwnerReference is the controller reference a mirror of obj carries.
func OwnerReference(s Source, obj metav1.Object) metav1.OwnerReference {
	gvk := s.GroupVersionKind()
	controller := true
	return metav1.OwnerReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: obj.GetName(), UID: obj.GetUID(),
		Controller: &controller}
}

// queueOf names the queue-scheduler queue a source PodGroup asks for with queue-scheduler's queue
// label or annotation ("" for none: the namespace's queue).
func queueOf(obj metav1.Object) string {
	if q := obj.GetLabels()[schedulingv1beta1.QueueLabel]; q != "" {
		return q
	}
	return obj.GetAnnotations()[schedulingv1beta1.QueueAnnotation]
}
