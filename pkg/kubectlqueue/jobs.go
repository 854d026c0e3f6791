package kubectlqueue

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/spf13/cobra"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/printers"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/textout"
)

// job is one PodGroup or QueueUnit of a queue, as jobs and describe print it.
type job struct {
	kind, namespace, name, phase, members, waiting string
	created                                        metav1.Time
}

func newJobsCommand(o *Options) *cobra.Command {
	return &cobra.Command{
		Use:               "jobs NAME",
		Short:             "List the PodGroups and QueueUnits of a queue, with why the waiting ones wait",
		Example:           `  kubectl queue jobs team-a`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeQueues(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.clients(); err != nil {
				return err
			}
			if _, err := o.getQueue(cmd.Context(), args[0]); err != nil {
				return err
			}
			jobs, err := o.jobsOf(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			w := printers.GetNewTabWriter(o.Out)
			l := &textout.Lines{W: w}
			if o.writeJobs(l, jobs, ""); l.Err != nil {
				return l.Err
			}
			return w.Flush()
		},
	}
}

// jobsOf lists the PodGroups and QueueUnits of queue in every namespace, oldest first.
func (o *Options) jobsOf(ctx context.Context, queue string) ([]job, error) {
	namespaceQueue, err := o.namespaceQueues(ctx)
	if err != nil {
		return nil, err
	}
	queueOf := func(namespace, named string) string {
		return schedulingv1beta1.QueueFor(named, namespaceQueue[namespace])
	}
	api := o.queues.SchedulingV1beta1()
	groups, err := api.PodGroups("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing PodGroups: %w", err)
	}
	units, err := api.QueueUnits("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing QueueUnits: %w", err)
	}
	var out []job
	for i := range groups.Items {
		if pg := &groups.Items[i]; queueOf(pg.Namespace, pg.Spec.Queue) == queue {
			out = append(out, podGroupJob(pg))
		}
	}
	for i := range units.Items {
		if u := &units.Items[i]; queueOf(u.Namespace, u.Spec.Queue) == queue {
			out = append(out, queueUnitJob(u))
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].created.Before(&out[j].created) })
	return out, nil
}

// namespaceQueues maps namespaces to their queue annotation.
func (o *Options) namespaceQueues(ctx context.Context) (map[string]string, error) {
	list, err := o.kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing namespaces: %w", err)
	}
	out := map[string]string{}
	for _, ns := range list.Items {
		out[ns.Name] = ns.Annotations[schedulingv1beta1.QueueAnnotation]
	}
	return out, nil
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
	kind := "PodGroup"
	if source := pg.Labels[schedulingv1beta1.GangSourceLabel]; source != "" {
		// It stands for a PodGroup of another gang API: name that API.
		kind += " (" + source + ")"
	}
	return job{kind: kind, namespace: pg.Namespace, name: pg.Name, phase: phase,
		members: fmt.Sprintf("%d/%d", pg.Status.Running, pg.MinMemberOrOne()), waiting: waiting, created: pg.CreationTimestamp}
}

func queueUnitJob(u *schedulingv1beta1.QueueUnit) job {
	phase, waiting := string(u.Status.Phase), ""
	if !u.Dequeued() {
		phase, waiting = string(schedulingv1beta1.QueueUnitEnqueued), u.Status.Message
	}
	return job{kind: "QueueUnit", namespace: u.Namespace, name: u.Name, phase: phase, members: "-",
		waiting: waiting, created: u.CreationTimestamp}
}

// writeJobs prints jobs as a table, each line behind indent; MEMBERS is running/minMember.
func (o *Options) writeJobs(l *textout.Lines, jobs []job, indent string) {
	if indent != "" {
		l.Printf("Jobs:\n")
		if len(jobs) == 0 {
			l.Printf("%s<none>\n", indent)
			return
		}
	}
	l.Printf("%sKIND\tNAMESPACE\tNAME\tPHASE\tMEMBERS\tAGE\tWAITING\n", indent)
	for _, j := range jobs {
		waiting := j.waiting
		if waiting == "" {
			waiting = "-"
		}
		l.Printf("%s%s\t%s\t%s\t%s\t%s\t%s\t%s\n", indent, j.kind, j.namespace, j.name, j.phase, j.members, o.age(j.created), waiting)
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
