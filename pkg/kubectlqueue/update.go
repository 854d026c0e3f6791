package kubectlqueue

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

func newUpdateCommand(o *Options) *cobra.Command {
	var flags specFlags
	var mode dryRun
	cmd := &cobra.Command{
		Use:   "update NAME",
		Short: "Change a queue's weight, capability, guarantee, parent, priority or reclaimability",
		Long: `Change the queue fields given as flags; the others keep their values. The state is changed with
open, close, suspend and resume.`,
		Example: `  kubectl queue update team-a --weight 3
  kubectl queue update team-a --capability cpu=128,memory=512Gi --guarantee ""`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeQueues(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !flags.anyChanged(cmd) {
				return fmt.Errorf("nothing to update: give at least one of --weight, --capability, --guarantee, --parent, --priority, --reclaimable")
			}
			return o.update(cmd, args[0], &flags, mode)
		},
	}
	flags.add(cmd, false)
	addDryRun(cmd, &mode)
	return cmd
}

func (o *Options) update(cmd *cobra.Command, name string, flags *specFlags, mode dryRun) error {
	if err := mode.validate(); err != nil {
		return err
	}
	if err := o.clients(); err != nil {
		return err
	}
	ctx := cmd.Context()
	api := o.queues.SchedulingV1beta1().Queues()
	unchanged := false
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		q, err := o.getQueue(ctx, name)
		if err != nil {
			return err
		}
		spec := q.Spec.DeepCopy()
		if err := flags.apply(cmd, &q.Spec); err != nil {
			return err
		}
		if unchanged = apiequality.Semantic.DeepEqual(spec, &q.Spec); unchanged || mode.client() {
			return nil
		}
		_, err = api.Update(ctx, q, metav1.UpdateOptions{DryRun: mode.option()})
		return err
	})
	if err != nil {
		return wrapUpdate(name, err)
	}
	verb := "updated"
	if unchanged {
		verb = "unchanged"
	}
	_, err = fmt.Fprintf(o.Out, "queue/%s %s%s\n", name, verb, mode.suffix())
	return err
}

func wrapUpdate(name string, err error) error {
	var missing notFound
	if errors.As(err, &missing) || errors.As(err, new(usageError)) {
		return err
	}
	return fmt.Errorf("updating queue %q: %w", name, err)
}

// queueFor checks the --dry-run mode, connects, and reads the queue a command acts on.
func (o *Options) queueFor(ctx context.Context, name string, mode dryRun) (*schedulingv1beta1.Queue, error) {
	if err := mode.validate(); err != nil {
		return nil, err
	}
	if err := o.clients(); err != nil {
		return nil, err
	}
	return o.getQueue(ctx, name)
}

// getQueue reads a queue, saying plainly when it does not exist.
func (o *Options) getQueue(ctx context.Context, name string) (*schedulingv1beta1.Queue, error) {
	q, err := o.queues.SchedulingV1beta1().Queues().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, notFound{name}
		}
		return nil, fmt.Errorf("reading queue %q: %w", name, err)
	}
	return q, nil
}
