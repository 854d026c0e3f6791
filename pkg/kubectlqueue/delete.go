package kubectlqueue

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

func newDeleteCommand(o *Options) *cobra.Command {
	var closeFirst bool
	var flags stateFlags
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a Closed queue",
		Long: `Delete a queue. Only a Closed queue can be deleted, so that no work is stranded; with
--close-first --wait the queue is closed, its work waited for, then deleted.`,
		Example: `  kubectl queue delete team-a
  kubectl queue delete team-a --close-first --wait=10m`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeQueues(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			if closeFirst && flags.wait <= 0 {
				return usageErrorf("--close-first needs --wait: the queue can only be deleted once it is Closed")
			}
			return o.delete(cmd.Context(), args[0], closeFirst, &flags)
		},
	}
	cmd.Flags().BoolVar(&closeFirst, "close-first", false, "close the queue and wait until it is Closed, then delete it")
	cmd.Flags().DurationVar(&flags.wait, "wait", 0, "with --close-first, how long to wait for the queue to close; --wait alone waits up to 1m")
	cmd.Flag("wait").NoOptDefVal = defaultWait.String()
	cmd.Flags().BoolVar(&flags.direct, "direct", false, "with --close-first, patch spec.state instead of issuing a Command")
	addDryRun(cmd, &flags.mode)
	return cmd
}

func (o *Options) delete(ctx context.Context, name string, closeFirst bool, flags *stateFlags) error {
	q, err := o.queueFor(ctx, name, flags.mode)
	if err != nil {
		return err
	}
	if q.Status.State != schedulingv1beta1.QueueStateClosed {
		if !closeFirst {
			return notClosed(q)
		}
		if flags.mode != "none" {
			return usageErrorf("--close-first cannot be combined with --dry-run: the queue must really close before it can be deleted")
		}
		if err := o.changeState(ctx, name, closeQueue, flags); err != nil {
			return err
		}
	}
	if !flags.mode.client() {
		if err := o.queues.SchedulingV1beta1().Queues().Delete(ctx, name, metav1.DeleteOptions{DryRun: flags.mode.option()}); err != nil {
			return fmt.Errorf("deleting queue %q: %w", name, err)
		}
	}
	_, err = fmt.Fprintf(o.Out, "queue/%s deleted%s\n", name, flags.mode.suffix())
	return err
}

// notClosed explains why a queue that is not Closed is not deleted, and how to close it.
func notClosed(q *schedulingv1beta1.Queue) error {
	return fmt.Errorf("queue %q is %s: only a Closed queue can be deleted, so that no work is stranded; "+
		"close it first (kubectl queue close %s --wait) or run kubectl queue delete %s --close-first --wait=%s",
		q.Name, q.EffectiveState(), q.Name, q.Name, 10*time.Minute)
}
