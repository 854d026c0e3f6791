package kubectlqueue

import (
	"context"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/spf13/cobra"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/printers"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/textout"
)

// job is one PodGroup, QueueUnit, Job or pod of a queue, as jobs and describe print it.
type job struct {
	kind, namespace, name, phase, members, waiting string
	created                                        metav1.Time
	// pods names a Job's pods, whose places in the queue are the Job's.
	pods []string
	// position is the job's place in its queue's order, from the live view; 0 when not known.
	position int32
	// reserved: waiting says when the job's reservation starts.
	reserved bool
}

func newJobsCommand(o *Options) *cobra.Command {
	var watch watchFlags
	cmd := &cobra.Command{
		Use:   "jobs NAME",
		Short: "List the work of a queue (PodGroups, QueueUnits, Jobs, pods), with why the waiting ones wait",
		Long: `List the work of a queue, oldest first: its PodGroups and QueueUnits, the Jobs whose pods are in
it, and its other pods. A Job whose pods are refused at creation (WAITING: the refusal, from the
Job's FailedCreate events) or wait for a PodGroup that does not exist (WAITING: PodGroupMissing's
message) is listed under the queue its pods name; when that queue does not exist, or is not known
while the PodGroup is missing, under each queue that takes work from the Job's namespace. The
work of every namespace is listed; a user who may not list every namespace's work sees the
namespace of the current context, or the one --namespace names.
POSITION is where pending work stands in the order the scheduler takes the queue's work (1 is
next), read from the scheduler's live view when the cluster serves it; WAITING then comes from it
too, computed at the request from the state the queue's row is read from, rather than from the
last attempt's condition.`,
		Example: `  kubectl queue jobs team-a
  kubectl queue jobs team-a --namespace team-a-dev --watch`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeQueues(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.clients(); err != nil {
				return err
			}
			if _, err := o.getQueue(cmd.Context(), args[0]); err != nil {
				return err
			}
			follow := o.followQueues(cmd.Context(), watch.watch)
			return watch.run(cmd.Context(), o.Out, follow, func(out io.Writer) error {
				jobs, err := o.jobsOf(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				w := printers.GetNewTabWriter(out)
				l := &textout.Lines{W: w}
				if o.writeJobs(l, jobs, ""); l.Err != nil {
					return l.Err
				}
				return w.Flush()
			})
		},
	}
	watch.add(cmd)
	return cmd
}

// jobsOf lists the work of queue, oldest first: its PodGroups and QueueUnits, the Jobs whose pods
// are in it (not queued by a QueueUnit) or that findStrays lists under it, and its other pods that
// belong to no PodGroup, Job or QueueUnit; in every namespace, or in the one workScope narrows the
// list to.
func (o *Options) jobsOf(ctx context.Context, queue string) ([]job, error) {
	w, scope, err := o.workScope(ctx, queue)
	if err != nil {
		return nil, err
	}
	queues := o.newNamespaceQueues(ctx, scope)
	if err := o.findStrays(ctx, w, queue, scope, queues); err != nil {
		return nil, err
	}
	var out []job
	for i := range w.groups {
		if pg := &w.groups[i]; queues.queueOf(ctx, pg.Namespace, pg.Spec.Queue) == queue {
			out = append(out, podGroupJob(pg))
		}
	}
	consumers := map[owner]bool{}
	for i := range w.units {
		u := &w.units[i]
		consumers[owner{namespace: u.Namespace, kind: u.Spec.ConsumerRef.Kind, name: u.Spec.ConsumerRef.Name}] = true
		if queues.queueOf(ctx, u.Namespace, u.Spec.Queue) == queue {
			out = append(out, queueUnitJob(u))
		}
	}
	out = append(out, podsAndJobs(w, queue, consumers)...)
	sort.Slice(out, func(i, j int) bool { return out[i].before(&out[j]) })
	if work := o.liveWorkOf(ctx, queue, scope); work != nil {
		for i := range out {
			out[i].fromLiveView(work)
		}
	}
	return out, nil
}

// before orders jobs oldest first; creation times are whole seconds, so kind, namespace and name
// order those of one second.
func (j *job) before(o *job) bool {
	if !j.created.Equal(&o.created) {
		return j.created.Before(&o.created)
	}
	if j.kind != o.kind {
		return j.kind < o.kind
	}
	if j.namespace != o.namespace {
		return j.namespace < o.namespace
	}
	return j.name < o.name
}

// owner is the controller of a pod, or the consumer a QueueUnit names.
type owner struct{ namespace, kind, name string }

// podsAndJobs makes a row for each Job with pods in the queue (or, before it has pods, whose pod
// template names the queue, or that is a stray listed under the queue) and one for each other pod
// of the queue; pods of a listed PodGroup show as their group, and the pods and Jobs of QueueUnits
// as their unit (a Job whose controller a unit queues, as JobSet's and MPIJob's, counts as the
// unit's).
func podsAndJobs(w *work, queue string, consumers map[owner]bool) []job {
	for i := range w.jobs {
		if ref := metav1.GetControllerOf(&w.jobs[i]); ref != nil && consumers[owner{namespace: w.jobs[i].Namespace, kind: ref.Kind, name: ref.Name}] {
			consumers[owner{namespace: w.jobs[i].Namespace, kind: "Job", name: w.jobs[i].Name}] = true
		}
	}
	groups := groupNames(w.groups)
	var out []job
	jobPods := map[owner][]*v1.Pod{}
	for i := range w.pods {
		pod := &w.pods[i]
		// By the scheduler's rule: a pod that came past the webhook names its gang without the label.
		if name, ok := schedulingv1beta1.GangOf(pod, func(schedulingv1beta1.GangSource) bool { return true }); ok &&
			groups[types.NamespacedName{Namespace: pod.Namespace, Name: name}] {
			continue
		}
		if ref := metav1.GetControllerOf(pod); ref != nil {
			key := owner{namespace: pod.Namespace, kind: ref.Kind, name: ref.Name}
			if consumers[key] {
				continue
			}
			if ref.Kind == "Job" && ref.APIVersion == batchv1.SchemeGroupVersion.String() {
				jobPods[key] = append(jobPods[key], pod)
				continue
			}
		}
		out = append(out, podJob(pod))
	}
	for i := range w.jobs {
		j := &w.jobs[i]
		key := owner{namespace: j.Namespace, kind: "Job", name: j.Name}
		pods, s := jobPods[key], w.strays[j.UID]
		if consumers[key] {
			continue
		}
		if len(pods) == 0 {
			namesQueue := j.Spec.Template.Labels[schedulingv1beta1.QueueLabel] == queue && len(schedulingv1beta1.GangRefs(schedulingv1beta1.JobTemplatePod(j))) == 0
			switch {
			case s != nil && s.here:
				pods = s.held
			case s != nil || !namesQueue:
				continue
			}
		}
		refused := ""
		if s != nil {
			refused = s.refusal
		}
		out = append(out, batchJob(j, pods, refused))
	}
	return out
}

// podJob is a pod of the queue on its own; MEMBERS is 1/1 once it is placed on a node.
func podJob(pod *v1.Pod) job {
	placed := 0
	if pod.Spec.NodeName != "" {
		placed = 1
	}
	return job{kind: "Pod", namespace: pod.Namespace, name: pod.Name, phase: string(pod.Status.Phase),
		members: fmt.Sprintf("%d/1", placed), waiting: podWaiting(pod), created: pod.CreationTimestamp}
}

// batchJob is a batch/v1 Job of the queue; MEMBERS is its pods placed on nodes and not finished,
// over its parallelism. It waits for why its pods are refused, when they are (refused), else for
// why its first waiting pod waits.
func batchJob(j *batchv1.Job, pods []*v1.Pod, refused string) job {
	placed, waiting := 0, refused
	for _, pod := range pods {
		if pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed {
			continue
		}
		if pod.Spec.NodeName != "" {
			placed++
		} else if waiting == "" {
			waiting = podWaiting(pod)
		}
	}
	parallelism := int32(1)
	if j.Spec.Parallelism != nil {
		parallelism = *j.Spec.Parallelism
	}
	names := make([]string, 0, len(pods))
	for _, pod := range pods {
		names = append(names, pod.Name)
	}
	return job{kind: "Job", namespace: j.Namespace, name: j.Name, phase: jobPhase(j, placed), waiting: waiting,
		members: fmt.Sprintf("%d/%d", placed, parallelism), created: j.CreationTimestamp, pods: names}
}

// jobPhase is Complete or Failed once the Job says so, Suspended, Running while a pod of it is on
// a node, else Pending.
func jobPhase(j *batchv1.Job, placed int) string {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == v1.ConditionTrue {
			return string(c.Type)
		}
	}
	switch {
	case j.Spec.Suspend != nil && *j.Spec.Suspend:
		return "Suspended"
	case placed > 0:
		return "Running"
	}
	return "Pending"
}

// podWaiting is why a pod not on a node yet waits: the message of its PodScheduled=False condition.
func podWaiting(pod *v1.Pod) string {
	if pod.Spec.NodeName != "" {
		return ""
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse {
			return c.Message
		}
	}
	return ""
}

func podGroupJob(pg *schedulingv1beta1.PodGroup) job {
	phase := string(pg.Status.Phase)
	if phase == "" {
		phase = string(schedulingv1beta1.PodGroupPending)
	}
	waiting := ""
	if c := meta.FindStatusCondition(pg.Status.Conditions, schedulingv1beta1.PodGroupUnschedulable); c != nil && c.Status == metav1.ConditionTrue {
		waiting = c.Message
	}
	reserved := false
	if c := meta.FindStatusCondition(pg.Status.Conditions, schedulingv1beta1.PodGroupReserved); c != nil && c.Status == metav1.ConditionTrue {
		// When it starts says more than why it could not start yet.
		waiting, reserved = c.Message, true
	}
	kind := "PodGroup"
	if source := pg.Labels[schedulingv1beta1.GangSourceLabel]; source != "" {
		// It stands for a PodGroup of another gang API: name that API.
		kind += " (" + source + ")"
	}
	return job{kind: kind, namespace: pg.Namespace, name: pg.Name, phase: phase,
		members: fmt.Sprintf("%d/%d", pg.Status.Running, pg.MinMemberOrOne()), waiting: waiting, created: pg.CreationTimestamp,
		reserved: reserved}
}

func queueUnitJob(u *schedulingv1beta1.QueueUnit) job {
	phase, waiting := string(u.Status.Phase), ""
	if !u.Dequeued() {
		phase, waiting = string(schedulingv1beta1.QueueUnitEnqueued), u.Status.Message
	}
	return job{kind: "QueueUnit", namespace: u.Namespace, name: u.Name, phase: phase, members: "-",
		waiting: waiting, created: u.CreationTimestamp}
}

// writeJobs prints jobs as a table, each line behind indent; MEMBERS is how many of a job's pods are placed
// (running, for a PodGroup) over how many it needs (minMember, parallelism, 1 for a pod); POSITION
// its place in the order the scheduler takes the queue's pending work (1 is next), when the live
// view is served.
func (o *Options) writeJobs(l *textout.Lines, jobs []job, indent string) {
	if indent != "" {
		l.Printf("Jobs:\n")
		if len(jobs) == 0 {
			l.Printf("%s<none>\n", indent)
			return
		}
	}
	l.Printf("%sKIND\tNAMESPACE\tNAME\tPHASE\tMEMBERS\tPOSITION\tAGE\tWAITING\n", indent)
	for _, j := range jobs {
		waiting, position := j.waiting, "-"
		if waiting == "" {
			waiting = "-"
		}
		if j.position > 0 {
			position = fmt.Sprint(j.position)
		}
		l.Printf("%s%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", indent, j.kind, j.namespace, j.name, j.phase, j.members, position,
			o.age(j.created), waiting)
	}
}

// age prints how long ago t was, as kubectl does ("5m", "3d").
func (o *Options) age(t metav1.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(o.Now().Sub(t.Time))
}

// eventTime is when an event last happened.
func eventTime(e *v1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}
