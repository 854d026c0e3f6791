package readmodel

import (
	"fmt"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	quota "k8s.io/apiserver/pkg/quota/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/forecast"
	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
	"github.com/queue-scheduler/queue-scheduler/pkg/rules"
)

// newWork is a WhatIf's new workload as the forecast plays it: count pods alike, made from template
// as the API server and the webhook would make them, its queue, and its place, behind all the work of
// its priority that waits already; or why the change would refuse it.
type newWork struct {
	name, namespace, queue, kind string
	gang                         bool
	template                     *v1.Pod
	count                        int
	// requests is what all its pods ask for.
	requests v1.ResourceList
	place    policy.Place
	refused  string
}

// key names the work (a gang), or with #i its pod i (of work that is no gang), in a forecast: a
// workload's name is a DNS subdomain, which holds neither / nor #.
func (w *newWork) key() string {
	return string(visibilityv1beta1.WorkloadNew) + "/" + w.namespace + "/" + w.name
}

func (w *newWork) podKey(i int) string { return fmt.Sprintf("%s#%d", w.key(), i) }

// placeable says whether every resource the work asks for is among dims, those some node has.
func (w *newWork) placeable(dims []v1.ResourceName) bool {
	for name, q := range w.requests {
		if !q.IsZero() && !slices.Contains(dims, name) {
			return false
		}
	}
	return true
}

// forecastWork is the work as the forecast takes it: a gang's pods together, or else each pod on
// its own under a key of its own. Its pods are alike: one member, read once, stands for each.
func (w *newWork) forecastWork(in *forecastIn, runtime forecast.Runtime, bound time.Duration) []forecast.Work {
	member := forecast.MembersOf(in.snap.Dims, []*v1.Pod{w.template}, in.eligible)[0]
	if w.gang {
		members := make([]forecast.Member, w.count)
		for i := range members {
			members[i] = member
		}
		return []forecast.Work{{Key: w.key(), Queue: w.queue, Place: w.place, Members: members, Runtime: runtime, Bound: bound, Unit: true}}
	}
	out := make([]forecast.Work, w.count)
	for i := range out {
		out[i] = forecast.Work{Key: w.podKey(i), Queue: w.queue, Place: w.place, Members: []forecast.Member{member}, Runtime: runtime, Bound: bound}
	}
	return out
}

// startOf is when the work starts, by starts: a gang's start, or the first of its pods'; with no
// start within the horizon when it was not played (it asks for what no node has).
func (w *newWork) startOf(starts ExpectedStarts) *visibilityv1beta1.ExpectedStart {
	first := starts.Of(w.key())
	if w.gang {
		return orNone(first, starts)
	}
	for i := range w.count {
		s := starts.Of(w.podKey(i))
		if s == nil {
			continue
		}
		if first == nil {
			first = s
			continue
		}
		if s.P50 != nil && (first.P50 == nil || s.P50.Before(first.P50)) {
			first.P50, first.RuntimeBasis = s.P50, s.RuntimeBasis
		}
		if s.P90 != nil && (first.P90 == nil || s.P90.Before(first.P90)) {
			first.P90 = s.P90
		}
	}
	return orNone(first, starts)
}

// orNone is s, or a forecast of no start within the horizon.
func orNone(s *visibilityv1beta1.ExpectedStart, starts ExpectedStarts) *visibilityv1beta1.ExpectedStart {
	if s != nil {
		return s
	}
	none := ExpectedStarts{byKey: map[string]forecast.Start{"": {}}, at: starts.at}
	return none.Of("")
}

// newWorkloads reads a WhatIf's new workloads into the work the forecast plays, each submitted now
// to namespace. A workload that a queue would refuse as the change leaves it (view) is kept, with
// why; one that could not be made is an error naming its field.
func (m *Model) newWorkloads(namespace string, specs []visibilityv1beta1.NewWorkload, view changedView) ([]*newWork, field.ErrorList) {
	var (
		out   []*newWork
		errs  field.ErrorList
		total int64
		seen  = map[string]bool{}
	)
	now := m.acct.Clock().Now()
	for i, spec := range specs {
		path := field.NewPath("spec", "workloads").Index(i)
		if msgs := validation.IsDNS1123Subdomain(spec.Name); len(msgs) > 0 {
			errs = append(errs, field.Invalid(path.Child("name"), spec.Name, strings.Join(msgs, "; ")))
			continue
		}
		switch {
		case seen[spec.Name]:
			errs = append(errs, field.Duplicate(path.Child("name"), spec.Name))
			continue
		case spec.Pods < 1:
			errs = append(errs, field.Invalid(path.Child("pods"), spec.Pods, "must be at least 1"))
			continue
		}
		seen[spec.Name] = true
		if total+int64(spec.Pods) > maxWhatIfPods {
			errs = append(errs, field.Invalid(path.Child("pods"), spec.Pods, fmt.Sprintf("the workloads would run more than %d pods in all", maxWhatIfPods)))
			continue
		}
		total += int64(spec.Pods)
		w, werrs := m.newWorkload(namespace, spec, path, view)
		if len(werrs) > 0 {
			errs = append(errs, werrs...)
			continue
		}
		w.place.Since = now
		out = append(out, w)
	}
	return out, errs
}

// newWorkload is one new workload: its pod made from the template as the API server would make it
// (requests defaulted from limits, the priority of its class), its queue resolved as its pods' would
// be, with the queue's default runtime bound as the webhook writes it.
func (m *Model) newWorkload(namespace string, spec visibilityv1beta1.NewWorkload, path *field.Path, view changedView) (*newWork, field.ErrorList) {
	kind := spec.Kind
	if kind == "" {
		kind = string(visibilityv1beta1.WorkloadPod)
		if spec.Gang {
			kind = string(visibilityv1beta1.WorkloadPodGroup)
		}
	}
	template, errs := m.podOf(namespace, spec, path.Child("template"))
	if len(errs) > 0 {
		return nil, errs
	}
	w := &newWork{name: spec.Name, namespace: namespace, gang: spec.Gang, kind: kind, template: template, count: int(spec.Pods), queue: spec.Queue}
	if w.queue == "" {
		ns, _ := m.acct.Store.Namespaces().Get(namespace)
		queue, err := m.acct.QueueOfNewPod(template, ns, m.acct.Store.PodGroupInCache)
		if err != nil {
			return nil, field.ErrorList{field.Invalid(path.Child("template", "metadata", "labels"), template.Labels, err.Error())}
		}
		w.queue = queue
	}
	if q, ok := view.Queue(w.queue); ok && template.Spec.ActiveDeadlineSeconds == nil {
		template.Spec.ActiveDeadlineSeconds = q.Spec.DefaultActiveDeadlineSeconds
	}
	pod := quota.RemoveZeros(resourcehelper.PodRequests(template, resourcehelper.PodResourcesOptions{}))
	all := pod.DeepCopy()
	for name, q := range all {
		q.Mul(int64(spec.Pods))
		all[name] = q
	}
	w.requests = all
	w.place = policy.Place{Priority: *template.Spec.Priority, Namespace: namespace, Name: spec.Name}
	refusals := rules.AcceptsWork(path.Child("queue"), w.queue, namespace, false, view)
	// As admission judges them: each pod alone against the capability, a gang whole.
	within := pod
	if w.gang {
		within = w.requests
	}
	refusals = append(refusals, rules.FitsCapability(path.Child("template", "spec", "containers"), within, w.queue, view)...)
	if len(refusals) > 0 {
		details := make([]string, len(refusals))
		for i, e := range refusals {
			details[i] = e.Error()
		}
		w.refused = strings.Join(details, "; ")
	}
	return w, nil
}

// podOf is the pod the template makes in namespace, as the API server would admit it: at least one
// container, no amount below zero, requests defaulted from limits, the priority of its class (an
// unknown class is refused, as the API server refuses it), for queue-scheduler, on no node yet.
func (m *Model) podOf(namespace string, spec visibilityv1beta1.NewWorkload, path *field.Path) (*v1.Pod, field.ErrorList) {
	pod := &v1.Pod{ObjectMeta: *spec.Template.ObjectMeta.DeepCopy(), Spec: *spec.Template.Spec.DeepCopy()}
	pod.Namespace, pod.Name = namespace, spec.Name
	var errs field.ErrorList
	specPath := path.Child("spec")
	if len(pod.Spec.Containers) == 0 {
		errs = append(errs, field.Required(specPath.Child("containers"), "a pod runs at least one container"))
	}
	for i := range pod.Spec.InitContainers {
		errs = append(errs, defaultRequests(&pod.Spec.InitContainers[i], specPath.Child("initContainers").Index(i))...)
	}
	for i := range pod.Spec.Containers {
		errs = append(errs, defaultRequests(&pod.Spec.Containers[i], specPath.Child("containers").Index(i))...)
	}
	errs = append(errs, nonNegative(specPath.Child("overhead"), pod.Spec.Overhead)...)
	if name := pod.Spec.SchedulerName; name != "" && name != schedulingv1beta1.SchedulerName {
		errs = append(errs, field.NotSupported(specPath.Child("schedulerName"), name, []string{schedulingv1beta1.SchedulerName}))
	}
	if pod.Spec.NodeName != "" {
		errs = append(errs, field.Forbidden(specPath.Child("nodeName"), "new work is not on a node yet"))
	}
	pod.Spec.SchedulerName, pod.Spec.Priority = schedulingv1beta1.SchedulerName, nil
	priority := m.acct.Store.ClassPriority("")
	if class := pod.Spec.PriorityClassName; class != "" {
		value, ok := m.acct.Store.ClassValue(class)
		if !ok {
			errs = append(errs, field.NotFound(specPath.Child("priorityClassName"), class))
		}
		priority = value
	}
	pod.Spec.Priority = &priority
	return pod, errs
}

// defaultRequests gives a container the requests of its limits where it states none, as the API
// server does, and refuses amounts below zero.
func defaultRequests(ctr *v1.Container, path *field.Path) field.ErrorList {
	errs := nonNegative(path.Child("resources", "requests"), ctr.Resources.Requests)
	errs = append(errs, nonNegative(path.Child("resources", "limits"), ctr.Resources.Limits)...)
	for name, q := range ctr.Resources.Limits {
		if _, ok := ctr.Resources.Requests[name]; !ok {
			if ctr.Resources.Requests == nil {
				ctr.Resources.Requests = v1.ResourceList{}
			}
			ctr.Resources.Requests[name] = q
		}
	}
	return errs
}
