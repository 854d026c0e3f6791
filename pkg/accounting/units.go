package accounting

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	schedulinglisters "k8s.io/client-go/listers/scheduling/v1"
	"k8s.io/client-go/tools/cache"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

// byConsumer indexes QueueUnits by ConsumerKey of their consumerRef.
const byConsumer = "consumer"

// ConsumerKey names a consumer as "namespace/group/kind/name"; the version is left out, so that a
// consumer served at several versions is one consumer.
func ConsumerKey(namespace, apiVersion, kind, name string) string {
	gv, _ := schema.ParseGroupVersion(apiVersion)
	return fmt.Sprintf("%s/%s/%s/%s", namespace, gv.Group, kind, name)
}

// UnitKey is "namespace/name" of a QueueUnit.
func UnitKey(u *schedulingv1beta1.QueueUnit) string { return u.Namespace + "/" + u.Name }

func consumerIndex(obj any) ([]string, error) {
	u, ok := obj.(*schedulingv1beta1.QueueUnit)
	if !ok {
		return nil, nil
	}
	ref := u.Spec.ConsumerRef
	return []string{ConsumerKey(u.Namespace, ref.APIVersion, ref.Kind, ref.Name)}, nil
}

// units finds the QueueUnit of a pod through the pod's owners, and a unit's priority.
type units struct {
	indexer         cache.Indexer
	jobs            batchlisters.JobLister
	priorityClasses schedulinglisters.PriorityClassLister
}

// UnitPriority is a QueueUnit's priority: spec.priority, else the value of its priorityClassName,
// else that of the global default PriorityClass, else 0.
func (s *Store) UnitPriority(u *schedulingv1beta1.QueueUnit) int32 {
	if u.Spec.Priority != nil {
		return *u.Spec.Priority
	}
	return s.ClassPriority(u.Spec.PriorityClassName)
}

// PodGroupPriority is a PodGroup's priority: the value of its priorityClassName, else that of the
// global default PriorityClass, else 0.
func (s *Store) PodGroupPriority(pg *schedulingv1beta1.PodGroup) int32 {
	return s.ClassPriority(pg.Spec.PriorityClassName)
}

// ClassValue is the value of the PriorityClass by that name; ok is false when there is none.
func (s *Store) ClassValue(name string) (value int32, ok bool) {
	pc, err := s.units.priorityClasses.Get(name)
	if err != nil {
		return 0, false
	}
	return pc.Value, true
}

// ClassPriority is the value of the PriorityClass by that name (0 when there is none by it), or for
// "" that of the global default PriorityClass, else 0.
func (s *Store) ClassPriority(name string) int32 {
	if name != "" {
		if pc, err := s.units.priorityClasses.Get(name); err == nil {
			return pc.Value
		}
		return 0
	}
	classes, _ := s.units.priorityClasses.List(labels.Everything())
	for _, pc := range classes {
		if pc.GlobalDefault {
			return pc.Value
		}
	}
	return 0
}

// UnitsOfConsumer returns the QueueUnits whose consumer is the object with the given identity; a
// unit whose consumerRef carries a UID matches only that incarnation of the consumer.
func (s *Store) UnitsOfConsumer(namespace, apiVersion, kind, name string, uid string) []*schedulingv1beta1.QueueUnit {
	all := byIndex[schedulingv1beta1.QueueUnit](s.units.indexer, byConsumer, ConsumerKey(namespace, apiVersion, kind, name))
	out := all[:0:0]
	for _, u := range all {
		if u.Spec.ConsumerRef.UID == "" || uid == "" || string(u.Spec.ConsumerRef.UID) == uid {
			out = append(out, u)
		}
	}
	return out
}

// UnitOf returns the QueueUnit a pod runs under, or nil: the unit whose consumer owns the pod, or
// owns the batch/v1 Job that owns the pod (as a Kubeflow MPIJob owns its launcher Job).
func (s *Store) UnitOf(pod *v1.Pod) *schedulingv1beta1.QueueUnit {
	for _, ref := range pod.OwnerReferences {
		if u := s.unitOwning(pod.Namespace, ref); u != nil {
			return u
		}
		job := s.ownerJob(pod.Namespace, ref)
		if job == nil {
			continue
		}
		for _, jobOwner := range job.OwnerReferences {
			if u := s.unitOwning(pod.Namespace, jobOwner); u != nil {
				return u
			}
		}
	}
	return nil
}

// Jobs reads the batch/v1 Jobs from the cache; nil when the accounting follows no Jobs.
func (s *Store) Jobs() batchlisters.JobLister { return s.units.jobs }

// ownerJob is the batch/v1 Job of namespace that ref names, or nil when ref names none or the Job
// is not in the cache.
func (s *Store) ownerJob(namespace string, ref metav1.OwnerReference) *batchv1.Job {
	if ref.Kind != "Job" || ref.APIVersion != "batch/v1" || s.units.jobs == nil {
		return nil
	}
	job, err := s.units.jobs.Jobs(namespace).Get(ref.Name)
	if err != nil || job.UID != ref.UID {
		return nil
	}
	return job
}

func (s *Store) unitOwning(namespace string, ref metav1.OwnerReference) *schedulingv1beta1.QueueUnit {
	found := s.UnitsOfConsumer(namespace, ref.APIVersion, ref.Kind, ref.Name, string(ref.UID))
	if len(found) == 0 {
		return nil
	}
	return found[0]
}
