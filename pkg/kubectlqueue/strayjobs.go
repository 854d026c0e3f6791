package kubectlqueue

import (
	"context"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

// A Job whose pods the API server refuses (the webhook, for a queue that does not exist or does not
// take the Job's namespace) has no pods, so no queue counts it: the refusal is only a FailedCreate
// event on the Job. A Job whose pods name a PodGroup that does not exist has pods, but they are in
// no queue until the group comes, which decides their queue. `jobs` lists both, with why they wait.

const (
	// failedCreate is the reason of the event a controller records when it cannot create a pod.
	failedCreate = "FailedCreate"
	// podGroupMissing is the reason the scheduler gives a pod whose PodGroup does not exist
	// (holdreport.PodGroupMissing).
	podGroupMissing = "PodGroupMissing"
	// noPodsCreated is a refused Job's reason for a user who may not read its events.
	noPodsCreated = "no pods created yet: the Job's FailedCreate events say why"
)

// stray is a Job whose pods are in no queue: refused at creation, or held until their PodGroup
// exists.
type stray struct {
	// refusal is why its pods are refused at creation, as the latest refusal says; "" when none
	// was refused since its newest pod was created.
	refusal string
	// held are its pods that wait for their PodGroup.
	held []*v1.Pod
	// here says that it is listed under the queue being listed.
	here bool
}

// refusal is a Job's latest FailedCreate event: its words and when it happened.
type refusal struct {
	message string
	at      time.Time
}

// findStrays finds the Jobs of w, of queue-scheduler, neither finished nor suspended, whose pods are
// refused or wait for their PodGroup, and says which of them are listed under queue: a Job whose
// pods name a queue that exists, under that queue; one whose queue does not exist, or is not known
// while its PodGroup does not exist, under each queue that takes work from its namespace, where its
// author looks for it.
func (o *Options) findStrays(ctx context.Context, w *work, queue, scope string, namespaces *namespaceQueues) error {
	var live []*batchv1.Job
	for i := range w.jobs {
		if j := &w.jobs[i]; jobRuns(j) && schedulingv1beta1.SchedulesJobPods(j, namespaces.labels(ctx, j.Namespace)) {
			live = append(live, j)
		}
	}
	if len(live) == 0 {
		return nil
	}
	refusals, readable, err := o.jobRefusals(ctx, scope)
	if err != nil {
		return err
	}
	groups := groupNames(w.groups)
	pods := podsByJob(w.pods)
	var queues *queueIndex
	for _, j := range live {
		s, err := o.strayOf(ctx, j, pods[j.UID], refusals, readable, groups)
		if err != nil {
			return err
		}
		if s == nil {
			continue
		}
		if queues == nil {
			queues = o.newQueueIndex(ctx)
		}
		s.here = queues.lists(ctx, queue, namedQueue(ctx, j, w.groups, namespaces), namespaces.labels(ctx, j.Namespace))
		if w.strays == nil {
			w.strays = map[types.UID]*stray{}
		}
		w.strays[j.UID] = s
	}
	return nil
}

// strayOf is the Job as a stray, or nil when its pods are in a queue, or on their way to one. pods
// are its pods in the queue being listed. For a user who may not read events (readable false), a
// Job that the Job controller started and that has no pods at all stands for a refused one.
func (o *Options) strayOf(ctx context.Context, j *batchv1.Job, pods []*v1.Pod, refusals map[types.UID]refusal, readable bool,
	groups map[types.NamespacedName]bool) (*stray, error) {
	s := &stray{}
	var newest time.Time
	for _, pod := range pods {
		if pod.CreationTimestamp.After(newest) {
			newest = pod.CreationTimestamp.Time
		}
	}
	switch r, ok := refusals[j.UID]; {
	case ok && r.at.After(newest):
		// Times are whole seconds: a pod created in the second of the refusal ends it, until the
		// controller's next attempt is refused again.
		s.refusal = r.message
	case !readable && len(pods) == 0 && j.Status.StartTime != nil && j.Status.Active == 0:
		s.refusal = noPodsCreated
	}
	if len(pods) == 0 && missingGang(j, groups) {
		held, err := o.heldPods(ctx, j)
		if err != nil {
			return nil, err
		}
		s.held = held
	}
	if s.refusal == "" && len(s.held) == 0 {
		return nil, nil
	}
	return s, nil
}

// jobRefusals reads the FailedCreate events of the Jobs of scope ("" for every namespace): the
// latest of each Job, by its UID. readable is false when the user may not list them; a note then
// says so.
func (o *Options) jobRefusals(ctx context.Context, scope string) (out map[types.UID]refusal, readable bool, err error) {
	list, err := o.kube.CoreV1().Events(scope).List(ctx, metav1.ListOptions{
		FieldSelector: fields.Set{"involvedObject.kind": "Job", "reason": failedCreate}.String()})
	switch {
	case apierrors.IsForbidden(err):
		where := fmt.Sprintf("namespace %q", scope)
		if scope == metav1.NamespaceAll {
			where = "every namespace"
		}
		const note = "note: you may not list the events of %s: a Job whose pods are refused says that it has none, not why (kubectl describe job shows why)\n"
		_, err := fmt.Fprintf(o.ErrOut, note, where)
		return nil, false, err
	case err != nil:
		return nil, false, fmt.Errorf("listing the Jobs' FailedCreate events: %w", err)
	}
	out = map[types.UID]refusal{}
	for i := range list.Items {
		e := &list.Items[i]
		ref := e.InvolvedObject
		if e.Reason != failedCreate || ref.Kind != "Job" || ref.UID == "" ||
			(ref.APIVersion != "" && ref.APIVersion != batchv1.SchemeGroupVersion.String()) {
			continue
		}
		if at := eventTime(e); at.After(out[ref.UID].at) {
			out[ref.UID] = refusal{message: refusalWords(e.Message), at: at}
		}
	}
	return out, true, nil
}

// refusalWords is a FailedCreate event's message in the words of whoever refused the pod: what the
// webhook said after the API server's `admission webhook "…" denied the request: `, else the API
// server's error, without the controller's "Error creating: " and the event recorder's "(combined
// from similar events): " (the webhook names each pod, so the messages of one Job differ).
func refusalWords(message string) string {
	message = strings.TrimPrefix(message, "(combined from similar events): ")
	if _, words, ok := strings.Cut(message, "denied the request: "); ok {
		return words
	}
	return strings.TrimPrefix(message, "Error creating: ")
}

// heldPods are the Job's pods that wait, not placed, because their PodGroup does not exist.
func (o *Options) heldPods(ctx context.Context, j *batchv1.Job) ([]*v1.Pod, error) {
	selector := labels.Set{batchv1.ControllerUidLabel: string(j.UID)}.AsSelector()
	if j.Spec.Selector != nil {
		var err error
		if selector, err = metav1.LabelSelectorAsSelector(j.Spec.Selector); err != nil {
			return nil, nil
		}
	}
	list, err := o.kube.CoreV1().Pods(j.Namespace).List(ctx, metav1.ListOptions{LabelSelector: selector.String()})
	switch {
	case apierrors.IsForbidden(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("listing the pods of Job %s/%s: %w", j.Namespace, j.Name, err)
	}
	var held []*v1.Pod
	for i := range list.Items {
		pod := &list.Items[i]
		if ref := metav1.GetControllerOf(pod); ref == nil || ref.UID != j.UID || pod.Spec.NodeName != "" || pod.DeletionTimestamp != nil {
			continue
		}
		for _, c := range pod.Status.Conditions {
			if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse && c.Reason == podGroupMissing {
				held = append(held, pod)
			}
		}
	}
	return held, nil
}

// jobRuns says whether a Job may create pods: it is neither finished nor suspended.
func jobRuns(j *batchv1.Job) bool {
	phase := jobPhase(j, 0)
	return phase != string(batchv1.JobComplete) && phase != string(batchv1.JobFailed) && phase != "Suspended"
}

// missingGang says whether the Job's pods name a PodGroup that is not among groups.
func missingGang(j *batchv1.Job, groups map[types.NamespacedName]bool) bool {
	name, ok := schedulingv1beta1.GangOf(schedulingv1beta1.JobTemplatePod(j), func(schedulingv1beta1.GangSource) bool { return true })
	return ok && !groups[types.NamespacedName{Namespace: j.Namespace, Name: name}]
}

// namedQueue is the queue a Job's pods would be in: the queue its template's label names; for a
// gang, its PodGroup's queue, not known ("") while the PodGroup does not exist; else its
// namespace's queue.
func namedQueue(ctx context.Context, j *batchv1.Job, groups []schedulingv1beta1.PodGroup, namespaces *namespaceQueues) string {
	pod := schedulingv1beta1.JobTemplatePod(j)
	if q := pod.Labels[schedulingv1beta1.QueueLabel]; q != "" {
		return q
	}
	name, gang := schedulingv1beta1.GangOf(pod, func(schedulingv1beta1.GangSource) bool { return true })
	if !gang {
		return namespaces.queueOf(ctx, j.Namespace, "")
	}
	for i := range groups {
		if pg := &groups[i]; pg.Namespace == j.Namespace && pg.Name == name {
			return namespaces.queueOf(ctx, pg.Namespace, pg.Spec.Queue)
		}
	}
	return ""
}

// groupNames are the names of groups.
func groupNames(groups []schedulingv1beta1.PodGroup) map[types.NamespacedName]bool {
	out := make(map[types.NamespacedName]bool, len(groups))
	for i := range groups {
		out[types.NamespacedName{Namespace: groups[i].Namespace, Name: groups[i].Name}] = true
	}
	return out
}

// podsByJob are the pods a batch/v1 Job controls, by the Job's UID.
func podsByJob(pods []v1.Pod) map[types.UID][]*v1.Pod {
	out := map[types.UID][]*v1.Pod{}
	for i := range pods {
		if ref := metav1.GetControllerOf(&pods[i]); ref != nil && ref.Kind == "Job" && ref.APIVersion == batchv1.SchemeGroupVersion.String() {
			out[ref.UID] = append(out[ref.UID], &pods[i])
		}
	}
	return out
}

// queueIndex answers which queues exist and which namespaces they take work from: from one list of
// the queues, or, for a user who may not list them, a get of each.
type queueIndex struct {
	o       *Options
	byName  map[string]*schedulingv1beta1.Queue // nil for a queue that does not exist
	parents map[string]bool
	listed  bool
}

func (o *Options) newQueueIndex(ctx context.Context) *queueIndex {
	x := &queueIndex{o: o, byName: map[string]*schedulingv1beta1.Queue{}, parents: map[string]bool{}}
	list, err := o.queues.SchedulingV1beta1().Queues().List(ctx, metav1.ListOptions{})
	if err != nil {
		return x
	}
	x.listed = true
	for i := range list.Items {
		q := &list.Items[i]
		x.byName[q.Name] = q
		if q.Spec.Parent != "" {
			x.parents[q.Spec.Parent] = true
		}
	}
	return x
}

// get is the named queue, nil when it does not exist; known is false when that could not be told.
func (x *queueIndex) get(ctx context.Context, name string) (q *schedulingv1beta1.Queue, known bool) {
	if q, ok := x.byName[name]; ok || x.listed {
		return q, true
	}
	q, err := x.o.queues.SchedulingV1beta1().Queues().Get(ctx, name, metav1.GetOptions{})
	switch {
	case err == nil:
		x.byName[name] = q
		return q, true
	case apierrors.IsNotFound(err):
		x.byName[name] = nil
		return nil, true
	}
	return nil, false
}

// lists says whether a stray Job whose pods name queue named ("" when not known), in a namespace
// with namespaceLabels, is listed under queue: under named when it exists (or may), else under each
// leaf queue that selects the namespace.
func (x *queueIndex) lists(ctx context.Context, queue, named string, namespaceLabels map[string]string) bool {
	if named != "" {
		if q, known := x.get(ctx, named); q != nil || !known {
			return named == queue
		}
	}
	q, _ := x.get(ctx, queue)
	if q == nil || q.Name == schedulingv1beta1.RootQueue || x.parents[q.Name] {
		return false
	}
	selector, err := metav1.LabelSelectorAsSelector(q.Spec.NamespaceSelector)
	return err == nil && selector.Matches(labels.Set(namespaceLabels))
}
