package kubectlqueue

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/cli-runtime/pkg/printers"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/textout"
)

func newDescribeCommand(o *Options) *cobra.Command {
	return &cobra.Command{
		Use:               "describe NAME",
		Short:             "Show a queue in detail: spec, status, share of the cluster, its work and why it waits, events",
		Example:           `  kubectl queue describe team-a`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeQueues(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.clients(); err != nil {
				return err
			}
			return o.describe(cmd.Context(), args[0])
		},
	}
}

func (o *Options) describe(ctx context.Context, name string) error {
	q, err := o.getQueue(ctx, name)
	if err != nil {
		return err
	}
	o.withLiveStatus(ctx, []*schedulingv1beta1.Queue{q})
	jobs, err := o.jobsOf(ctx, name)
	if err != nil {
		return err
	}
	events, err := o.queueEvents(ctx, name)
	if err != nil {
		return err
	}
	var cluster v1.ResourceList
	if root, err := o.queues.SchedulingV1beta1().Queues().Get(ctx, schedulingv1beta1.RootQueue, metav1.GetOptions{}); err == nil {
		cluster = root.Status.Deserved
	}
	// Each section is aligned on its own, as kubectl describe does.
	for _, section := range []func(*textout.Lines){
		func(l *textout.Lines) { describeSpec(l, q, cluster) },
		func(l *textout.Lines) { describeConditions(l, q.Status.Conditions) },
		func(l *textout.Lines) { o.writeJobs(l, jobs, "  ") },
		func(l *textout.Lines) { o.describeEvents(l, events) },
	} {
		w := printers.GetNewTabWriter(o.Out)
		l := &textout.Lines{W: w}
		if section(l); l.Err != nil {
			return l.Err
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	return nil
}

func describeSpec(l *textout.Lines, q *schedulingv1beta1.Queue, cluster v1.ResourceList) {
	reclaimable := q.Spec.Reclaimable == nil || *q.Spec.Reclaimable
	spec := q.Spec.State
	if spec == "" {
		spec = schedulingv1beta1.QueueStateOpen
	}
	s := q.Status
	l.Printf("Name:\t%s\n", q.Name)
	l.Printf("Parent:\t%s\n", parentColumn(q))
	l.Printf("State:\t%s (requested: %s)\n", q.EffectiveState(), spec)
	l.Printf("Weight:\t%d\n", q.Spec.Weight)
	l.Printf("Priority:\t%d\n", q.Spec.Priority)
	l.Printf("Reclaimable:\t%t\n", reclaimable)
	l.Printf("Namespaces:\t%s\n", namespacesOf(q))
	l.Printf("Capability:\t%s\n", textout.Resources(q.Spec.Capability))
	l.Printf("Guarantee:\t%s\n", textout.Resources(q.Spec.Guarantee.Resource))
	l.Printf("Allocated:\t%s\n", textout.Resources(s.Allocated))
	l.Printf("Deserved:\t%s\n", textout.Resources(s.Deserved))
	l.Printf("Share of the cluster:\t%s\n", shareOf(s.Deserved, cluster))
	describeUsage(l, q)
	l.Printf("PodGroups:\t%d pending, %d inqueue, %d running, %d unknown, %d completed\n",
		s.Pending, s.Inqueue, s.Running, s.Unknown, s.Completed)
	l.Printf("QueueUnits:\t%d enqueued, %d dequeued\n", s.Enqueued, s.Dequeued)
}

// describeUsage prints the queue's decayed usage, in resource-hours (core-hours, GiB-hours…), and
// effective weights, from the live view (the queue's and those below it) or the status's last
// checkpoint (its own pods'), when there is one.
func describeUsage(l *textout.Lines, q *schedulingv1beta1.Queue) {
	u := q.Status.Usage
	if u == nil {
		l.Printf("Usage (decayed):\t<none>\n")
		return
	}
	l.Printf("Usage (decayed):\t%s, at %s\n", textout.ResourceHours(u.ResourceSeconds), u.Time.UTC().Format(time.RFC3339))
	weights := "its weight"
	if len(u.EffectiveWeight) > 0 {
		var parts []string
		for _, name := range sortedNames(u.EffectiveWeight) {
			w := u.EffectiveWeight[name]
			parts = append(parts, fmt.Sprintf("%s %.3g", name, w.AsApproximateFloat64()))
		}
		weights = strings.Join(parts, ", ") + " (its weight elsewhere)"
	}
	l.Printf("Effective weight:\t%s\n", weights)
}

// shareOf prints deserved as a percentage of the cluster, per resource: "cpu 25%, memory 25%".
func shareOf(deserved, cluster v1.ResourceList) string {
	var parts []string
	for _, name := range sortedNames(deserved) {
		total, ok := cluster[name]
		if !ok || total.IsZero() {
			continue
		}
		d := deserved[name]
		parts = append(parts, fmt.Sprintf("%s %.0f%%", name, 100*d.AsApproximateFloat64()/total.AsApproximateFloat64()))
	}
	if len(parts) == 0 {
		return "<none>"
	}
	return strings.Join(parts, ", ")
}

func sortedNames(list v1.ResourceList) []v1.ResourceName {
	names := make([]v1.ResourceName, 0, len(list))
	for name := range list {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool { return names[i] < names[j] })
	return names
}

func describeConditions(l *textout.Lines, conditions []metav1.Condition) {
	l.Printf("Conditions:\n")
	if len(conditions) == 0 {
		l.Printf("  <none>\n")
		return
	}
	l.Printf("  TYPE\tSTATUS\tREASON\tMESSAGE\n")
	for _, c := range conditions {
		l.Printf("  %s\t%s\t%s\t%s\n", c.Type, c.Status, c.Reason, c.Message)
	}
}

// queueEvents lists the events of queue name; nil, not an error, for a user who may not read them
// (a queue's events are kept in the default namespace, which tenants seldom may read).
func (o *Options) queueEvents(ctx context.Context, name string) ([]v1.Event, error) {
	events, err := o.kube.CoreV1().Events("").List(ctx, metav1.ListOptions{FieldSelector: fields.Set{
		"involvedObject.kind": "Queue", "involvedObject.name": name}.String()})
	switch {
	case apierrors.IsForbidden(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("listing the events of queue %q: %w", name, err)
	}
	if events.Items == nil {
		events.Items = []v1.Event{}
	}
	return events.Items, nil
}

// describeEvents prints the queue's events; events is nil when they could not be read.
func (o *Options) describeEvents(l *textout.Lines, events []v1.Event) {
	l.Printf("Events:\n")
	switch {
	case events == nil:
		l.Printf("  <not shown: you may not list events in every namespace>\n")
		return
	case len(events) == 0:
		l.Printf("  <none>\n")
		return
	}
	sort.Slice(events, func(i, j int) bool { return eventTime(&events[i]).Before(eventTime(&events[j])) })
	l.Printf("  TYPE\tREASON\tAGE\tMESSAGE\n")
	for i := range events {
		e := &events[i]
		l.Printf("  %s\t%s\t%s\t%s\n", e.Type, e.Reason, o.age(metav1.NewTime(eventTime(e))), e.Message)
	}
}

// namespacesOf says which namespaces a queue takes work from.
func namespacesOf(q *schedulingv1beta1.Queue) string {
	sel := q.Spec.NamespaceSelector
	switch {
	case sel == nil:
		return "none (no namespace selector)"
	case len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0:
		return "all"
	}
	return metav1.FormatLabelSelector(sel)
}
