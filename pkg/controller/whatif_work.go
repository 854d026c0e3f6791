package controller

import (
	"cmp"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	quota "k8s.io/apiserver/pkg/quota/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/forecast"
	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
	"github.com/queue-scheduler/queue-scheduler/pkg/rules"
)

// newWork is a WhatIf's new workload as the forecast plays it: its pods, its queue and its place,
// behind all the work of its priority that waits already; or why the change would refuse it.
type newWork struct {
	name, namespace, queue, kind string
	gang                         bool
	pods                         []*v1.Pod
	// requests is what all its pods ask for.
	requests v1.ResourceList
	place    policy.Place
	refused  string
}

// key names the work, or with a gang of none, its first pod, in a forecast.
func (w *newWork) key() string {
	return string(visibilityv1beta1.WorkloadNew) + "/" + w.namespace + "/" + w.name
}

// forecastWork is the work as the forecast takes it: a gang's pods together, or else each pod on
// its own under a key of its own.
func (w *newWork) forecastWork(in *forecastIn) []forecast.Work {
	members := forecast.MembersOf(in.snap.Dims, w.pods, in.eligible)
	if w.gang {
		return []forecast.Work{{Key: w.key(), Queue: w.queue, Place: w.place, Members: members}}
	}
	out := make([]forecast.Work, len(members))
	for i, m := range members {
		out[i] = forecast.Work{Key: w.podKey(i), Queue: w.queue, Place: w.place, Members: []forecast.Member{m}}
	}
	return out
}

// podKey names the work's pod i, of a workload that is no gang, in a forecast.
func (w *newWork) podKey(i int) string { return fmt.Sprintf("%s/%d", w.key(), i) }

// startOf is when the work starts, by starts: a gang's start, or the first of its pods'.
func (w *newWork) startOf(starts expectedStarts) *visibilityv1beta1.ExpectedStart {
	if w.gang {
		return starts.of(w.key())
	}
	var first *visibilityv1beta1.ExpectedStart
	for i := range w.pods {
		s := starts.of(w.podKey(i))
		if first == nil {
			first = s
			continue
		}
		if s.P50 != nil && (first.P50 == nil || s.P50.Before(first.P50)) {
			first.P50 = s.P50
		}
		if s.P90 != nil && (first.P90 == nil || s.P90.Before(first.P90)) {
			first.P90 = s.P90
		}
	}
	return first
}

// newWorkloads reads a WhatIf's new workloads into the work the forecast plays, each submitted now
// to namespace, with the resources they ask for. A workload that a queue would refuse as the change
// leaves it (view) is kept, with why; one that could not be made is an error naming its field.
func (c *Controller) newWorkloads(namespace string, specs []visibilityv1beta1.NewWorkload, view changedView) ([]*newWork, []v1.ResourceName, field.ErrorList) {
	var (
		out   []*newWork
		names []v1.ResourceName
		errs  field.ErrorList
		total int64
		seen  = map[string]bool{}
	)
	now := c.acct.Clock().Now()
	for i, spec := range specs {
		path := field.NewPath("spec", "workloads").Index(i)
		switch {
		case spec.Name == "":
			errs = append(errs, field.Required(path.Child("name"), "names the workload in the answer"))
			continue
		case seen[spec.Name]:
			errs = append(errs, field.Duplicate(path.Child("name"), spec.Name))
			continue
		case spec.Pods < 1:
			errs = append(errs, field.Invalid(path.Child("pods"), spec.Pods, "must be at least 1"))
			continue
		}
		seen[spec.Name] = true
		if total += int64(spec.Pods); total > maxWhatIfPods {
			errs = append(errs, field.Invalid(path.Child("pods"), spec.Pods, fmt.Sprintf("the workloads run more than %d pods in all", maxWhatIfPods)))
			continue
		}
		w, err := c.newWorkload(namespace, spec, path, view)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		w.place.Since = now
		for name := range w.requests {
			names = append(names, name)
		}
		out = append(out, w)
	}
	return out, names, errs
}

// newWorkload is one new workload: its pods made from the template, its queue resolved as its pods'
// would be, its priority as the API server would give them.
func (c *Controller) newWorkload(namespace string, spec visibilityv1beta1.NewWorkload, path *field.Path, view changedView) (*newWork, *field.Error) {
	w := &newWork{name: spec.Name, namespace: namespace, gang: spec.Gang, kind: cmp.Or(spec.Kind, string(visibilityv1beta1.WorkloadPod))}
	template := &v1.Pod{ObjectMeta: *spec.Template.ObjectMeta.DeepCopy(), Spec: *spec.Template.Spec.DeepCopy()}
	template.Namespace = namespace
	if template.Spec.Priority == nil {
		priority := c.acct.ClassPriority(template.Spec.PriorityClassName)
		template.Spec.Priority = &priority
	}
	w.queue = spec.Queue
	if w.queue == "" {
		ns, _ := c.acct.Namespaces().Get(namespace)
		queue, err := c.acct.QueueOfNewPod(template, ns, c.acct.PodGroupInCache)
		if err != nil {
			return nil, field.Invalid(path.Child("template", "metadata", "labels"), template.Labels, err.Error())
		}
		w.queue = queue
	}
	for i := range spec.Pods {
		pod := template.DeepCopy()
		pod.Name = fmt.Sprintf("%s-%d", spec.Name, i)
		w.pods = append(w.pods, pod)
	}
	one := resourcehelper.PodRequests(template, resourcehelper.PodResourcesOptions{})
	for name, q := range one {
		q.Mul(int64(spec.Pods))
		one[name] = q
	}
	w.requests = quota.RemoveZeros(one)
	w.place = policy.Place{Priority: *template.Spec.Priority, Namespace: namespace, Name: spec.Name}
	refusals := rules.AcceptsWork(path.Child("queue"), w.queue, namespace, false, view)
	if w.gang {
		refusals = append(refusals, rules.FitsCapability(path.Child("template", "spec", "containers"), w.requests, w.queue, view)...)
	}
	if len(refusals) > 0 {
		details := make([]string, len(refusals))
		for i, e := range refusals {
			details[i] = e.Detail
			if details[i] == "" {
				details[i] = e.Error()
			}
		}
		w.refused = strings.Join(details, "; ")
	}
	return w, nil
}
