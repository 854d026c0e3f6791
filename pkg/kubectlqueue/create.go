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
		Example: `  kubectl queue create team-a --weight 2 --capability cpu=64,memory=256Gi
  kubectl queue create ml --parent org --guarantee cpu=16 --reclaimable=false
  kubectl queue create staging --state Suspended --dry-run=server`,
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
	_, err := fmt.Fprintf(o.Out, "queue/%s created%s\n", q.Name, mode.suffix())
	return err
}
