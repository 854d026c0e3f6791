package kubectlqueue

import (
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/resource"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
)

// The kinds a what-if reads from its files.
var (
	jobKind    = batchv1.SchemeGroupVersion.WithKind("Job")
	podKind    = v1.SchemeGroupVersion.WithKind("Pod")
	queueKind  = schedulingv1beta1.SchemeGroupVersion.WithKind("Queue")
	whatIfKind = visibilityv1beta1.SchemeGroupVersion.WithKind("WhatIf")
)

// addToWhatIf adds one object of the files to spec: a Job or a Pod as a new workload of namespace,
// a Queue as a change of the queue, a WhatIf's own spec as it is. warn is told of what it leaves out.
func addToWhatIf(spec *visibilityv1beta1.WhatIfSpec, info *resource.Info, namespace string, warn func(string)) error {
	u, ok := info.Object.(*unstructured.Unstructured)
	if !ok {
		return fmt.Errorf("%s: not an object", info.Source)
	}
	gvk := u.GroupVersionKind()
	where := fmt.Sprintf("%s: %s %q", info.Source, gvk.Kind, u.GetName())
	if ns := u.GetNamespace(); ns != "" && ns != namespace && gvk != queueKind {
		return fmt.Errorf("%s is in namespace %q: a what-if asks about one namespace, %q (--namespace)", where, ns, namespace)
	}
	switch gvk {
	case jobKind:
		var job batchv1.Job
		if err := fromUnstructured(u, &job, where); err != nil {
			return err
		}
		spec.Workloads = append(spec.Workloads, jobWorkload(&job))
	case podKind:
		var pod v1.Pod
		if err := fromUnstructured(u, &pod, where); err != nil {
			return err
		}
		spec.Workloads = append(spec.Workloads, visibilityv1beta1.NewWorkload{Name: pod.Name, Kind: podKind.Kind, Pods: 1,
			Template: v1.PodTemplateSpec{ObjectMeta: pod.ObjectMeta, Spec: pod.Spec}})
	case queueKind:
		var q schedulingv1beta1.Queue
		if err := fromUnstructured(u, &q, where); err != nil {
			return err
		}
		spec.Queues = append(spec.Queues, queueChange(&q))
		if ignored := ignoredQueueFields(&q); len(ignored) > 0 {
			warn(fmt.Sprintf("%s: a what-if plays changes of weight, guarantee, capability, reclaimable and state; %s left as the queue has them",
				where, strings.Join(ignored, ", ")))
		}
	case whatIfKind:
		var w visibilityv1beta1.WhatIf
		if err := fromUnstructured(u, &w, where); err != nil {
			return err
		}
		spec.Queues = append(spec.Queues, w.Spec.Queues...)
		spec.Workloads = append(spec.Workloads, w.Spec.Workloads...)
	default:
		return fmt.Errorf("%s: a what-if reads Jobs, Pods, Queues and WhatIfs, not %s", where, schema.GroupKind{Group: gvk.Group, Kind: gvk.Kind})
	}
	return nil
}

func fromUnstructured(u *unstructured.Unstructured, into any, where string) error {
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, into, true); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	return nil
}

// jobWorkload is a Job as new work: its parallelism's pods (1 when unset, at most its completions),
// as its template makes them, bounded by the Job's activeDeadlineSeconds as the webhook bounds
// them. Its queue is its pods': the Job's own labels do not reach them.
func jobWorkload(job *batchv1.Job) visibilityv1beta1.NewWorkload {
	pods := int32(1)
	if p := job.Spec.Parallelism; p != nil {
		pods = *p
	}
	if c := job.Spec.Completions; c != nil && *c < pods {
		pods = *c
	}
	template := *job.Spec.Template.DeepCopy()
	if template.Spec.ActiveDeadlineSeconds == nil {
		template.Spec.ActiveDeadlineSeconds = job.Spec.ActiveDeadlineSeconds
	}
	return visibilityv1beta1.NewWorkload{Name: job.Name, Kind: jobKind.Kind, Pods: pods, Template: template}
}

// ignoredQueueFields names the fields a Queue manifest sets that a what-if does not play.
func ignoredQueueFields(q *schedulingv1beta1.Queue) []string {
	var out []string
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"spec.parent", q.Spec.Parent != ""},
		{"spec.namespaceSelector", q.Spec.NamespaceSelector != nil},
		{"spec.priority", q.Spec.Priority != 0},
		{"spec.defaultActiveDeadlineSeconds", q.Spec.DefaultActiveDeadlineSeconds != nil},
	} {
		if f.set {
			out = append(out, f.name)
		}
	}
	return out
}

// queueChange is a Queue manifest as a change: the fields it sets.
func queueChange(q *schedulingv1beta1.Queue) visibilityv1beta1.QueueChange {
	ch := visibilityv1beta1.QueueChange{Name: q.Name, Guarantee: q.Spec.Guarantee.Resource, Capability: q.Spec.Capability,
		Reclaimable: q.Spec.Reclaimable, State: q.Spec.State}
	if q.Spec.Weight != 0 {
		ch.Weight = &q.Spec.Weight
	}
	return ch
}
