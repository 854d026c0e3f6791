package kubectlqueue

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

func newCreateCommand(o *Options) *cobra.Command {
	var flags specFlags
	var mode dryRun
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a queue",
		Long: `Create a queue. A queue accepts work only from the namespaces its --namespaces selector selects
(--all-namespaces: every namespace); without either it accepts no namespace's work yet.`,
		Example: `  kubectl queue create team-a --weight 2 --capability cpu=64,memory=256Gi --namespaces team=a
  kubectl queue create ml --parent org --guarantee cpu=16 --reclaimable=false --namespaces 'kubernetes.io/metadata.name in (ml,ml-dev)'
  kubectl queue create shared --all-namespaces
  kubectl queue create staging --state Suspended --namespaces team=staging --dry-run=server`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			q := &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: args[0]}}
			if err := flags.apply(cmd, &q.Spec); err != nil {
				return err
			}
			return o.create(cmd.Context(), q, mode)
		},
	}
	flags.add(cmd, true)
	addDryRun(cmd, &mode)
	return cmd
}

func (o *Options) create(ctx context.Context, q *schedulingv1beta1.Queue, mode dryRun) error {
	if err := mode.validate(); err != nil {
		return err
	}
	if !mode.client() {
		if err := o.clients(); err != nil {
			return err
		}
		if _, err := o.queues.SchedulingV1beta1().Queues().Create(ctx, q, metav1.CreateOptions{DryRun: mode.option()}); err != nil {
			return fmt.Errorf("creating queue %q: %w", q.Name, err)
		}
	}
	if _, err := fmt.Fprintf(o.Out, "queue/%s created%s\n", q.Name, mode.suffix()); err != nil {
		return err
	}
	if q.Spec.NamespaceSelector == nil && mode.client() {
		// The server warns of it itself.
		_, err := fmt.Fprintf(o.ErrOut, "Warning: queue %q accepts no namespace's work until it has a namespace selector: kubectl queue update %s --namespaces SELECTOR (or --all-namespaces)\n", q.Name, q.Name)
		return err
	}
	return nil
}
