package kubectlqueue

import (
	"context"
	"fmt"
	"io"
	"sort"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned/scheme"
	"github.com/queue-scheduler/queue-scheduler/pkg/textout"
)

// listFlags choose how queues are printed.
type listFlags struct {
	print *genericclioptions.PrintFlags
	tree  bool
	watchFlags
}

func (f *listFlags) add(cmd *cobra.Command) {
	f.print = genericclioptions.NewPrintFlags("").WithTypeSetter(scheme.Scheme)
	f.print.AddFlags(cmd)
	cmd.Flag("output").Usage = "output format: wide, json, yaml or name (default: a table)"
	cmd.Flags().BoolVar(&f.tree, "tree", false, "print the table as the queue hierarchy")
}

func newListCommand(o *Options) *cobra.Command {
	var flags listFlags
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List all queues",
		Example: `  kubectl queue list
  kubectl queue ls -o wide --tree
  kubectl queue list -o wide --watch`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.clients(); err != nil {
				return err
			}
			follow := o.followQueues(cmd.Context(), flags.watch)
			return flags.run(cmd.Context(), o.Out, follow, func(out io.Writer) error {
				list, err := o.queues.SchedulingV1beta1().Queues().List(cmd.Context(), metav1.ListOptions{})
				if err != nil {
					return fmt.Errorf("listing queues: %w", err)
				}
				queues := make([]*schedulingv1beta1.Queue, 0, len(list.Items))
				for i := range list.Items {
					queues = append(queues, &list.Items[i])
				}
				sort.Slice(queues, func(i, j int) bool { return queues[i].Name < queues[j].Name })
				return o.printQueues(cmd.Context(), out, queues, &flags)
			})
		},
	}
	flags.add(cmd)
	flags.watchFlags.add(cmd)
	return cmd
}

func newGetCommand(o *Options) *cobra.Command {
	var flags listFlags
	cmd := &cobra.Command{
		Use:   "get NAME...",
		Short: "Show the named queues",
		Example: `  kubectl queue get team-a team-b
  kubectl queue get team-a -o yaml`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeQueues(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.clients(); err != nil {
				return err
			}
			queues, err := o.getQueues(cmd.Context(), args)
			if err != nil {
				return err
			}
			return o.printQueues(cmd.Context(), o.Out, queues, &flags)
		},
	}
	flags.add(cmd)
	return cmd
}

func (o *Options) getQueues(ctx context.Context, names []string) ([]*schedulingv1beta1.Queue, error) {
	queues := make([]*schedulingv1beta1.Queue, 0, len(names))
	for _, name := range names {
		q, err := o.getQueue(ctx, name)
		if err != nil {
			return nil, err
		}
		queues = append(queues, q)
	}
	return queues, nil
}

// printQueues prints queues as -o asks: a table (wide with the resources), live from the
// scheduler when it serves its view, or the objects as stored through kubectl's printers for json,
// yaml and name.
func (o *Options) printQueues(ctx context.Context, out io.Writer, queues []*schedulingv1beta1.Queue, flags *listFlags) error {
	format := *flags.print.OutputFormat
	if format == "" || format == "wide" {
		o.withLiveStatus(ctx, queues)
		if flags.tree {
			queues = treeOrder(queues)
		}
		return writeTable(out, queues, format == "wide", flags.tree)
	}
	printer, err := flags.print.ToPrinter()
	if err != nil {
		return usageErrorf("-o %s: %v", format, err)
	}
	if len(queues) == 1 && format != "name" {
		return printer.PrintObj(queues[0], out)
	}
	list := &schedulingv1beta1.QueueList{}
	for _, q := range queues {
		if format == "name" {
			if err := printer.PrintObj(q, out); err != nil {
				return err
			}
			continue
		}
		list.Items = append(list.Items, *q)
	}
	if format == "name" {
		return nil
	}
	return printer.PrintObj(list, out)
}

// writeTable prints the vcctl columns, and with wide the allocated and deserved resources.
func writeTable(out io.Writer, queues []*schedulingv1beta1.Queue, wide, tree bool) error {
	w := printers.GetNewTabWriter(out)
	l := &textout.Lines{W: w}
	header := "NAME\tSTATE\tWEIGHT\tPARENT\tINQUEUE\tPENDING\tRUNNING\tUNKNOWN\tCOMPLETED"
	if wide {
		header += "\tALLOCATED\tDESERVED"
	}
	l.Printf("%s\n", header)
	prefixes := map[string]string{}
	if tree {
		prefixes = treePrefixes(queues)
	}
	for _, q := range queues {
		s := q.Status
		row := fmt.Sprintf("%s%s\t%s\t%d\t%s\t%d\t%d\t%d\t%d\t%d", prefixes[q.Name], q.Name, q.EffectiveState(),
			q.Spec.Weight, parentColumn(q), s.Inqueue, s.Pending, s.Running, s.Unknown, s.Completed)
		if wide {
			row += "\t" + textout.Resources(s.Allocated) + "\t" + textout.Resources(s.Deserved)
		}
		l.Printf("%s\n", row)
	}
	if l.Err != nil {
		return l.Err
	}
	return w.Flush()
}

func parentColumn(q *schedulingv1beta1.Queue) string {
	switch {
	case q.Name == schedulingv1beta1.RootQueue:
		return "-"
	case q.Spec.Parent == "":
		return schedulingv1beta1.RootQueue
	}
	return q.Spec.Parent
}

// treeOrder puts queues in depth-first order of the hierarchy, children by name; queues whose parent
// is not among them come last, each as the top of its own tree.
func treeOrder(queues []*schedulingv1beta1.Queue) []*schedulingv1beta1.Queue {
	children, tops := treeIndex(queues)
	out := make([]*schedulingv1beta1.Queue, 0, len(queues))
	var visit func(q *schedulingv1beta1.Queue)
	visit = func(q *schedulingv1beta1.Queue) {
		out = append(out, q)
		for _, c := range children[q.Name] {
			visit(c)
		}
	}
	for _, q := range tops {
		visit(q)
	}
	return out
}

// treeIndex returns each queue's children, and the queues with no parent among queues.
func treeIndex(queues []*schedulingv1beta1.Queue) (map[string][]*schedulingv1beta1.Queue, []*schedulingv1beta1.Queue) {
	byName := map[string]bool{}
	for _, q := range queues {
		byName[q.Name] = true
	}
	children := map[string][]*schedulingv1beta1.Queue{}
	var tops []*schedulingv1beta1.Queue
	for _, q := range queues {
		parent := parentColumn(q)
		if parent == "-" || !byName[parent] {
			tops = append(tops, q)
			continue
		}
		children[parent] = append(children[parent], q)
	}
	byNameOrder := func(list []*schedulingv1beta1.Queue) {
		sort.Slice(list, func(i, j int) bool {
			if list[i].Name == schedulingv1beta1.RootQueue || list[j].Name == schedulingv1beta1.RootQueue {
				return list[i].Name == schedulingv1beta1.RootQueue
			}
			return list[i].Name < list[j].Name
		})
	}
	for _, list := range children {
		byNameOrder(list)
	}
	byNameOrder(tops)
	return children, tops
}

// treePrefixes draws the branches in front of each name, for queues in treeOrder.
func treePrefixes(queues []*schedulingv1beta1.Queue) map[string]string {
	children, tops := treeIndex(queues)
	out := map[string]string{}
	var visit func(q *schedulingv1beta1.Queue, indent string)
	visit = func(q *schedulingv1beta1.Queue, indent string) {
		kids := children[q.Name]
		for i, c := range kids {
			branch, next := "├─ ", "│  "
			if i == len(kids)-1 {
				branch, next = "└─ ", "   "
			}
			out[c.Name] = indent + branch
			visit(c, indent+next)
		}
	}
	for _, q := range tops {
		visit(q, "")
	}
	return out
}
