package kubectlqueue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/printers"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/textout"
)

func newETACommand(o *Options) *cobra.Command {
	var queue string
	cmd := &cobra.Command{
		Use:   "eta [KIND/]NAME | --queue QUEUE",
		Short: "Show when pending work is expected to start",
		Long: `Show when pending work is expected to start, from the scheduler's live view: the scheduling
policy played forward from the cluster's state, with the running pods' runtimes at their mean
(EXPECTED START) and at their 90th percentile (P90). NAME is a pending PodGroup, QueueUnit or pod
of the current namespace (or --namespace), or else the object that controls pods that wait, on their
own or as their PodGroup, directly (a Job, PyTorchJob, TFJob…) or through its Jobs (a JobSet, a
CronJob), or that a QueueUnit queues. KIND narrows it:
podgroup, queueunit, pod, or the kind of that object, singular or plural (job is batch/v1's).
--queue lists the queue's pending work, of every namespace for a user who may read it,
else of the current namespace.

BASIS says what the expected start rests on: the runtime of the run it waits for (running now, or
started in the forecast), read from the default runtime while nothing like that run has finished
(the weakest), from the runs learned (how many, and of which work: "only" below ten), from a run
that has outlived every run learned (a guess: it runs as long again), or from a runtime bound
(activeDeadlineSeconds: it ends by then at the latest). "-": it waits for no run's end.`,
		Example: `  kubectl queue eta train --namespace team-a
  kubectl queue eta podgroup/train
  kubectl queue eta job/sweep
  kubectl queue eta pytorchjob/bert
  kubectl queue eta jobset/sweep
  kubectl queue eta --queue team-a`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if (len(args) == 0) == (queue == "") {
				return fmt.Errorf("name the pending work, or a queue with --queue (not both)")
			}
			if err := o.clients(); err != nil {
				return err
			}
			ns, err := o.namespace()
			if err != nil {
				return err
			}
			var items []visibilityv1beta1.PendingWorkload
			if queue != "" {
				items, err = o.pendingOfQueue(cmd.Context(), queue, ns)
			} else {
				items, err = o.pendingNamed(cmd.Context(), args[0], ns)
			}
			if err != nil {
				return err
			}
			return o.writeETA(items)
		},
	}
	cmd.Flags().StringVar(&queue, "queue", "", "list the expected starts of this queue's pending work")
	return cmd
}

// pendingOfQueue is a queue's pending work: of every namespace when the user may read it, else of
// namespace.
func (o *Options) pendingOfQueue(ctx context.Context, queue, namespace string) ([]visibilityv1beta1.PendingWorkload, error) {
	if _, err := o.getQueue(ctx, queue); err != nil {
		return nil, err
	}
	list, err := o.queues.VisibilityV1beta1().QueueSummaries().GetPendingWorkloads(ctx, queue, metav1.GetOptions{})
	if err == nil {
		return list.Items, nil
	}
	if !apierrors.IsForbidden(err) {
		return nil, liveViewError(err)
	}
	mine, err := o.queues.VisibilityV1beta1().PendingWorkloads(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, liveViewError(err)
	}
	var out []visibilityv1beta1.PendingWorkload
	for _, w := range mine.Items {
		if w.Queue == queue {
			out = append(out, w)
		}
	}
	return out, nil
}

// workloadKinds are the kinds of pending work the live view lists, as eta's KIND names them.
var workloadKinds = []visibilityv1beta1.WorkloadKind{visibilityv1beta1.WorkloadPodGroup, visibilityv1beta1.WorkloadQueueUnit, visibilityv1beta1.WorkloadPod}

// pendingNamed is the pending work of namespace that name ([KIND/]NAME) names: the PodGroup,
// QueueUnit or pod of that name, or else the waiting work of the object of that name that runs it (a
// Job, PyTorchJob, RayJob…; KIND names its kind).
func (o *Options) pendingNamed(ctx context.Context, name, namespace string) ([]visibilityv1beta1.PendingWorkload, error) {
	kind, name, hasKind := strings.Cut(name, "/")
	if !hasKind {
		kind, name = "", kind
	}
	list, err := o.queues.VisibilityV1beta1().PendingWorkloads(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, liveViewError(err)
	}
	isWorkload := slices.ContainsFunc(workloadKinds, func(k visibilityv1beta1.WorkloadKind) bool { return kindIs(kind, string(k)) })
	var found []visibilityv1beta1.PendingWorkload
	if kind == "" || isWorkload {
		for _, w := range list.Items {
			if w.Workload.Name == name && (kind == "" || kindIs(kind, string(w.Workload.Kind))) {
				found = append(found, w)
			}
		}
	}
	if len(found) == 0 && !isWorkload {
		// Named by its kind: what may not be read is told only to one who asked for that kind.
		if found, err = o.workOf(ctx, runner{namespace: namespace, kind: kind, name: name}, list.Items, kind == ""); err != nil {
			return nil, err
		}
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("no pending work named %q in namespace %q: it may be running already, or not exist", name, namespace)
	}
	return found, nil
}

// kindIs says whether a kind as the user gave it names kind: singular or plural, in any case.
func kindIs(given, kind string) bool {
	return strings.EqualFold(given, kind) || strings.EqualFold(given, kind+"s")
}

// runner names an object that runs work: a Job, a PyTorchJob… of a namespace; kind "" is any kind.
type runner struct{ namespace, kind, name string }

// batchJob says whether the runner is a batch/v1 Job.
func (r runner) batchJob() bool {
	return strings.EqualFold(r.kind, "job") || strings.EqualFold(r.kind, "jobs")
}

// is says whether a reference (a controller's, a QueueUnit's consumer's) names the runner: its name,
// and its kind, singular or plural, in any case; named as a Job, a Job of batch/v1 only.
func (r runner) is(kind, apiVersion, name string) bool {
	if name != r.name || (r.kind != "" && !kindIs(r.kind, kind)) {
		return false
	}
	return !r.batchJob() || apiVersion == "" || apiVersion == batchv1.SchemeGroupVersion.String()
}

// workOf is the pending work among items that the runner runs: its pods waiting on their own, the
// PodGroups its pods belong to, and the QueueUnits that queue it. With quiet, a lookup the user may
// not make finds nothing rather than failing.
func (o *Options) workOf(ctx context.Context, r runner, items []visibilityv1beta1.PendingWorkload, quiet bool) ([]visibilityv1beta1.PendingWorkload, error) {
	runnerPods := sync.OnceValues(func() ([]v1.Pod, error) { return o.podsOf(ctx, r) })
	lookups := map[visibilityv1beta1.WorkloadKind]func() (sets.Set[string], error){
		visibilityv1beta1.WorkloadQueueUnit: func() (sets.Set[string], error) { return o.unitsOf(ctx, r) },
		visibilityv1beta1.WorkloadPod: func() (sets.Set[string], error) {
			pods, err := runnerPods()
			return podNames(pods), err
		},
		visibilityv1beta1.WorkloadPodGroup: func() (sets.Set[string], error) {
			pods, err := runnerPods()
			return gangNames(pods), err
		},
		// A Job whose pods admission refuses stands for itself.
		visibilityv1beta1.WorkloadJob: func() (sets.Set[string], error) {
			if r.kind == "" || r.batchJob() {
				return sets.New(r.name), nil
			}
			return sets.New[string](), nil
		},
	}
	names := map[visibilityv1beta1.WorkloadKind]sets.Set[string]{}
	var out []visibilityv1beta1.PendingWorkload
	for _, w := range items {
		lookup, ok := lookups[w.Workload.Kind]
		if !ok {
			continue
		}
		if _, done := names[w.Workload.Kind]; !done {
			found, err := lookup()
			if err != nil && (!quiet || !apierrors.IsForbidden(errors.Unwrap(err))) {
				return nil, err
			}
			names[w.Workload.Kind] = found
		}
		if names[w.Workload.Kind].Has(w.Workload.Name) {
			out = append(out, w)
		}
	}
	return out, nil
}

// unitsOf names the QueueUnits that queue the runner.
func (o *Options) unitsOf(ctx context.Context, r runner) (sets.Set[string], error) {
	units, err := o.queues.SchedulingV1beta1().QueueUnits(r.namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the QueueUnits of namespace %s: %w", r.namespace, err)
	}
	out := sets.New[string]()
	for _, u := range units.Items {
		if ref := u.Spec.ConsumerRef; r.is(ref.Kind, ref.APIVersion, ref.Name) {
			out.Insert(u.Name)
		}
	}
	return out, nil
}

// podsOf lists the pods whose controller is the runner: a batch/v1 Job's by its job-name label (none
// for a name no Job can have), any other's from the namespace's pods, with those of the batch/v1
// Jobs the runner controls (as a JobSet, a CronJob or an MPIJob's launcher runs its pods).
func (o *Options) podsOf(ctx context.Context, r runner) ([]v1.Pod, error) {
	var opts metav1.ListOptions
	if r.batchJob() {
		if len(validation.IsValidLabelValue(r.name)) > 0 {
			return nil, nil
		}
		opts.LabelSelector = labels.Set{batchv1.JobNameLabel: r.name}.String()
	}
	pods, err := o.kube.CoreV1().Pods(r.namespace).List(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("listing the pods of %s: %w", r, err)
	}
	var out []v1.Pod
	var jobPods []v1.Pod
	for i := range pods.Items {
		ref := metav1.GetControllerOf(&pods.Items[i])
		switch {
		case ref == nil:
		case r.is(ref.Kind, ref.APIVersion, ref.Name):
			out = append(out, pods.Items[i])
		case !r.batchJob() && ref.Kind == "Job" && ref.APIVersion == batchv1.SchemeGroupVersion.String():
			jobPods = append(jobPods, pods.Items[i])
		}
	}
	if len(jobPods) == 0 {
		return out, nil
	}
	jobs, err := o.jobsRunBy(ctx, r)
	if err != nil {
		if len(out) > 0 {
			return out, nil // The runner's own pods are found: Jobs it may run are not needed for them.
		}
		return nil, err
	}
	for i := range jobPods {
		ref := metav1.GetControllerOf(&jobPods[i])
		if uid, ok := jobs[ref.Name]; ok && (ref.UID == "" || ref.UID == uid) {
			out = append(out, jobPods[i])
		}
	}
	return out, nil
}

// jobsRunBy is the UID, by name, of each batch/v1 Job whose controller is the runner.
func (o *Options) jobsRunBy(ctx context.Context, r runner) (map[string]types.UID, error) {
	jobs, err := o.kube.BatchV1().Jobs(r.namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the Jobs of %s: %w", r, err)
	}
	out := map[string]types.UID{}
	for i := range jobs.Items {
		if ref := metav1.GetControllerOf(&jobs.Items[i]); ref != nil && r.is(ref.Kind, ref.APIVersion, ref.Name) {
			out[jobs.Items[i].Name] = jobs.Items[i].UID
		}
	}
	return out, nil
}

// String names the runner as eta's messages do: KIND NAMESPACE/NAME.
func (r runner) String() string {
	if r.kind == "" {
		return r.namespace + "/" + r.name
	}
	return r.kind + " " + r.namespace + "/" + r.name
}

// podNames names pods.
func podNames(pods []v1.Pod) sets.Set[string] {
	out := sets.New[string]()
	for i := range pods {
		out.Insert(pods[i].Name)
	}
	return out
}

// gangNames names the PodGroups that pods belong to, by any gang API: queue-scheduler's PodGroup
// that stands for another API's has its name.
func gangNames(pods []v1.Pod) sets.Set[string] {
	out := sets.New[string]()
	for i := range pods {
		for _, ref := range schedulingv1beta1.GangRefs(&pods[i]) {
			out.Insert(ref.Name)
		}
	}
	return out
}

// liveViewError says that expected starts come from the live view, when it is not served.
func liveViewError(err error) error {
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("the scheduler's live view (visibility.queue-scheduler.io) is not served here, and expected starts come from it: %w", err)
	}
	return err
}

// writeETA prints each piece of pending work with its expected starts, and what the expected start
// rests on.
func (o *Options) writeETA(items []visibilityv1beta1.PendingWorkload) error {
	w := printers.GetNewTabWriter(o.Out)
	l := &textout.Lines{W: w}
	l.Printf("NAMESPACE\tWORKLOAD\tQUEUE\tPOSITION\tEXPECTED START\tP90\tBASIS\n")
	for _, item := range items {
		p50, p90, basis := "-", "-", "-"
		switch s := item.ExpectedStart; {
		case item.Reason == exceedsCapability:
			p50, basis = "never", "its request exceeds its queue's capability: it starts only once the capability is raised"
		case item.Reason == podsRefused:
			p50, basis = "never", "admission refuses its pods: it starts only once they are admitted"
		case s != nil:
			p50, p90 = o.fromNow(s.P50), o.fromNow(s.P90)
			if s.P50 != nil {
				basis = basisOf(s.RuntimeBasis)
			}
		}
		l.Printf("%s\t%s/%s\t%s\t%d\t%s\t%s\t%s\n", item.Namespace, strings.ToLower(string(item.Workload.Kind)), item.Workload.Name,
			item.Queue, item.PositionInQueue, p50, p90, basis)
	}
	if l.Err != nil {
		return l.Err
	}
	return w.Flush()
}

// fromNow writes an expected start as the time from now ("now" once it has come), or "not within
// a week" when there is none.
func (o *Options) fromNow(t *metav1.Time) string {
	if t == nil {
		return "not within a week"
	}
	if d := t.Sub(o.Now()); d > time.Second {
		return "in " + duration.HumanDuration(d)
	}
	return "now"
}

// exceedsCapability is the reason of work whose request alone exceeds its queue's capability
// (holdreport.ExceedsCapability): no run's end lets it in.
const exceedsCapability = "ExceedsCapability"

// podsRefused is the reason of a Job whose pods admission refuses (readmodel.ReasonPodsRefused).
const podsRefused = "PodsRefused"

// fewRuns is the fewest finished runs a learned runtime is read from that eta does not call few:
// the 90th percentile of fewer runs is their longest.
const fewRuns = 10

// learnedFrom says which finished work a learned runtime was read from, of the run a start waits
// for.
var learnedFrom = map[visibilityv1beta1.RuntimeScope]string{
	visibilityv1beta1.ScopeShape:          "of its shape",
	visibilityv1beta1.ScopeKind:           "of its kind",
	visibilityv1beta1.ScopeQueue:          "of its queue's work",
	visibilityv1beta1.ScopeKindInAnyQueue: "of its kind in every queue",
	visibilityv1beta1.ScopeAll:            "of any work",
}

// basisOf says what an expected start rests on: the runtime of the run it waits for, read from the
// default, from runs learned (few of them, or of work unlike it, said so), from a run that outlived
// them, or from a runtime bound; "-" for a start that waits for no run.
func basisOf(b *visibilityv1beta1.RuntimeBasis) string {
	if b == nil {
		return "-"
	}
	runs := fmt.Sprintf("%d runs", b.Runs)
	if b.Runs == 1 {
		runs = "1 run"
	}
	if of := learnedFrom[b.LearnedFrom]; of != "" {
		runs += " " + of
	}
	switch b.Source {
	case visibilityv1beta1.RuntimeDefault:
		return "default runtime: nothing like the run it waits for has finished yet"
	case visibilityv1beta1.RuntimeOutlived:
		if b.Runs == 0 {
			return "a guess: the run it waits for has outlived the default runtime"
		}
		return "a guess: the run it waits for has outlived all " + runs
	case visibilityv1beta1.RuntimeLearned:
		if b.Runs < fewRuns {
			return "learned from only " + runs
		}
		return "learned from " + runs
	case visibilityv1beta1.RuntimeBounded:
		return "runtime bound (activeDeadlineSeconds)"
	case visibilityv1beta1.RuntimeKnown:
		return "runtime known"
	}
	return string(b.Source)
}
