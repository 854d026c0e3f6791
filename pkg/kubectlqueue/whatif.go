package kubectlqueue

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/cli-runtime/pkg/resource"

	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned/scheme"
	"github.com/queue-scheduler/queue-scheduler/pkg/textout"
)

type whatIfFlags struct {
	files resource.FilenameOptions
	print *genericclioptions.PrintFlags
	all   bool
}

func newWhatIfCommand(o *Options) *cobra.Command {
	var flags whatIfFlags
	cmd := &cobra.Command{
		Use:   "what-if -f FILENAME",
		Short: "Show how shares and expected starts would change with new work or changed queues",
		Long: `Show how the queues' fair shares, and when the namespace's pending work is expected to start, would
change if the objects in the files were applied, without applying them: nothing is written to the
cluster. The scheduler answers on its state at the request, playing both the cluster as it is and
as it would be.

The files may hold Jobs and Pods (new work in the namespace: a Job runs its parallelism's pods),
Queues (each field the manifest sets replaces the queue's own: weight, guarantee, capability,
reclaimable, state), and WhatIf objects (visibility.queue-scheduler.io/v1beta1) for any of these,
and for gangs. Every object is in the current namespace (or --namespace).`,
		Example: `  # Would my job start sooner if team-a's weight were 3?
  kubectl queue what-if -f team-a-weight-3.yaml -f train-job.yaml
  # The whole answer, every queue included
  kubectl queue what-if -f change.yaml -o yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(flags.files.Filenames) == 0 {
				return usageErrorf("name the change with -f FILENAME")
			}
			if err := o.clients(); err != nil {
				return err
			}
			ns, err := o.namespace()
			if err != nil {
				return err
			}
			spec, err := o.whatIfSpec(ns, &flags.files)
			if err != nil {
				return err
			}
			answer, err := o.queues.VisibilityV1beta1().WhatIfs(ns).Create(cmd.Context(),
				&visibilityv1beta1.WhatIf{ObjectMeta: metav1.ObjectMeta{Namespace: ns}, Spec: *spec}, metav1.CreateOptions{})
			if err != nil {
				return liveViewError(err)
			}
			return o.printWhatIf(cmd.Context(), o.Out, answer, &flags)
		},
	}
	cmd.Flags().StringSliceVarP(&flags.files.Filenames, "filename", "f", nil, "files, directories or URLs of the change (- for standard input)")
	cmd.Flags().BoolVarP(&flags.files.Recursive, "recursive", "R", false, "read the directories of -f recursively")
	cmd.Flags().BoolVar(&flags.all, "all", false, "list every queue, not only those whose share changes")
	flags.print = genericclioptions.NewPrintFlags("").WithTypeSetter(scheme.Scheme)
	flags.print.AddFlags(cmd)
	cmd.Flag("output").Usage = "output format: json or yaml for the whole answer (default: tables)"
	return cmd
}

// whatIfSpec reads the change from the files: every object, read locally, becomes part of one spec.
func (o *Options) whatIfSpec(namespace string, files *resource.FilenameOptions) (*visibilityv1beta1.WhatIfSpec, error) {
	infos, err := resource.NewBuilder(o.ConfigFlags).Unstructured().Local().FilenameParam(false, files).Flatten().Do().Infos()
	if err != nil {
		return nil, err
	}
	spec := &visibilityv1beta1.WhatIfSpec{}
	warn := func(msg string) { _, _ = fmt.Fprintln(o.ErrOut, "Warning: "+msg) }
	for _, info := range infos {
		if err := addToWhatIf(spec, info, namespace, warn); err != nil {
			return nil, err
		}
	}
	if len(spec.Queues) == 0 && len(spec.Workloads) == 0 {
		return nil, fmt.Errorf("the files hold no change: no Job, Pod, Queue or WhatIf")
	}
	return spec, nil
}

// printWhatIf prints the answer: with -o json or yaml, as it is; else a table of the queues whose
// share changes (every queue with all), and one of the namespace's work and the new work.
func (o *Options) printWhatIf(_ context.Context, out io.Writer, answer *visibilityv1beta1.WhatIf, flags *whatIfFlags) error {
	if format := *flags.print.OutputFormat; format != "" {
		printer, err := flags.print.ToPrinter()
		if err != nil {
			return usageErrorf("-o %s: %v", format, err)
		}
		return printer.PrintObj(answer, out)
	}
	w := printers.GetNewTabWriter(out)
	l := &textout.Lines{W: w}
	shown := 0
	l.Printf("QUEUE\tDESERVED\tDESERVED IF\tSHARE\tSHARE IF\n")
	for _, q := range answer.Status.Queues {
		if !flags.all && equality.Semantic.DeepEqual(q.Deserved, q.DeservedIf) && q.Share == q.ShareIf {
			continue
		}
		shown++
		l.Printf("%s\t%s\t%s\t%s\t%s\n", q.Name, textout.Resources(q.Deserved), textout.Resources(q.DeservedIf), q.Share, q.ShareIf)
	}
	if shown == 0 {
		l.Printf("(no queue's share changes)\t\t\t\t\n")
	}
	l.Printf("\nWORKLOAD\tQUEUE\tEXPECTED START\tSTART IF\tP90\tP90 IF\n")
	for _, wl := range answer.Status.Workloads {
		now, nowP90, then, thenP90 := "-", "-", "-", "-"
		if s := wl.Start; s != nil {
			now, nowP90 = o.fromNow(s.P50), o.fromNow(s.P90)
		}
		if s := wl.StartIf; s != nil {
			then, thenP90 = o.fromNow(s.P50), o.fromNow(s.P90)
		}
		if wl.Refused != "" {
			then, thenP90 = "refused: "+wl.Refused, ""
		}
		l.Printf("%s/%s\t%s\t%s\t%s\t%s\t%s\n", strings.ToLower(string(wl.Workload.Kind)), wl.Workload.Name, wl.Queue, now, then, nowP90, thenP90)
	}
	if l.Err != nil {
		return l.Err
	}
	return w.Flush()
}
