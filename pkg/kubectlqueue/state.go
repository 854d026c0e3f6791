package kubectlqueue

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	busv1alpha1 "github.com/queue-scheduler/queue-scheduler/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

// defaultWait is how long a bare --wait waits.
const defaultWait = time.Minute

// pollInterval is how often --wait reads the queue.
const pollInterval = 250 * time.Millisecond

// stateChange is one of open, close, suspend and resume.
type stateChange struct {
	verb   string
	action busv1alpha1.Action
	// want is the spec.state the change requests, and the status.state --wait waits for.
	want  schedulingv1beta1.QueueState
	short string
}

var (
	open       = stateChange{"open", busv1alpha1.OpenQueue, schedulingv1beta1.QueueStateOpen, "Open a queue: it accepts and schedules new work"}
	closeQueue = stateChange{"close", busv1alpha1.CloseQueue, schedulingv1beta1.QueueStateClosed, "Close a queue: it takes no new work, and is Closed once its work has finished"}
	suspend    = stateChange{"suspend", busv1alpha1.SuspendQueue, schedulingv1beta1.QueueStateSuspended, "Suspend a queue: it accepts work but allocates nothing new; running pods keep running"}
	resume     = stateChange{"resume", busv1alpha1.ResumeQueue, schedulingv1beta1.QueueStateOpen, "Resume a Suspended queue"}
)

// stateFlags are the flags of open, close, suspend and resume.
type stateFlags struct {
	direct          bool
	wait            time.Duration
	reason, message string
	mode            dryRun
}

func (f *stateFlags) add(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.direct, "direct", false, "patch spec.state instead of issuing a Command")
	cmd.Flags().DurationVar(&f.wait, "wait", 0, "wait until the queue's status shows the state; --wait alone waits up to 1m")
	cmd.Flag("wait").NoOptDefVal = defaultWait.String()
	cmd.Flags().StringVar(&f.reason, "reason", "", "a short cause recorded on the queue's event (Command only)")
	cmd.Flags().StringVar(&f.message, "message", "", "an explanation recorded on the queue's event (Command only)")
	addDryRun(cmd, &f.mode)
}

func newStateCommand(o *Options, change stateChange) *cobra.Command {
	var flags stateFlags
	cmd := &cobra.Command{
		Use:   change.verb + " NAME",
		Short: change.short,
		Long: change.short + `.

By default a Command (bus.queue-scheduler.io) is created in the current namespace and the controller
applies it; --direct patches the queue's spec.state instead.`,
		Example: fmt.Sprintf(`  kubectl queue %[1]s team-a
  kubectl queue %[1]s team-a --wait=2m --reason Maintenance --message "node pool upgrade"
  kubectl queue %[1]s team-a --direct`, change.verb),
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeQueues(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.changeState(cmd.Context(), args[0], change, &flags)
		},
	}
	flags.add(cmd)
	return cmd
}

func (o *Options) changeState(ctx context.Context, name string, change stateChange, flags *stateFlags) error {
	q, err := o.queueFor(ctx, name, flags.mode)
	if err != nil {
		return err
	}
	if err := allowed(q, change); err != nil {
		return err
	}
	if q.Spec.State == change.want || (q.Spec.State == "" && change.want == schedulingv1beta1.QueueStateOpen) {
		if _, err := fmt.Fprintf(o.Out, "queue/%s is already %s\n", name, change.want); err != nil {
			return err
		}
	} else if err := o.request(ctx, q, change, flags); err != nil {
		return err
	}
	if flags.wait <= 0 || flags.mode != "none" {
		return nil
	}
	return o.waitFor(ctx, name, change.want, flags.wait)
}

// allowed refuses the changes the state table ignores, with what to do instead.
func allowed(q *schedulingv1beta1.Queue, change stateChange) error {
	state := q.EffectiveState()
	switch {
	case change.action == busv1alpha1.SuspendQueue && q.Spec.State == schedulingv1beta1.QueueStateClosed:
		return fmt.Errorf("queue %q is %s: a closed queue cannot be suspended; open it first (kubectl queue open %s)", q.Name, state, q.Name)
	case change.action == busv1alpha1.ResumeQueue && q.Spec.State != schedulingv1beta1.QueueStateSuspended:
		return fmt.Errorf("queue %q is %s, not Suspended: there is nothing to resume", q.Name, state)
	}
	return nil
}

// request issues the Command, or patches spec.state with --direct.
func (o *Options) request(ctx context.Context, q *schedulingv1beta1.Queue, change stateChange, flags *stateFlags) error {
	if flags.direct {
		if !flags.mode.client() {
			patch := fmt.Appendf(nil, `{"spec":{"state":%q}}`, change.want)
			_, err := o.queues.SchedulingV1beta1().Queues().Patch(ctx, q.Name, types.MergePatchType, patch, metav1.PatchOptions{DryRun: flags.mode.option()})
			if err != nil {
				return fmt.Errorf("setting queue %q to %s: %w", q.Name, change.want, err)
			}
		}
		_, err := fmt.Fprintf(o.Out, "queue/%s spec.state set to %s%s\n", q.Name, change.want, flags.mode.suffix())
		return err
	}
	ns, err := o.namespace()
	if err != nil {
		return err
	}
	cmd := &busv1alpha1.Command{
		ObjectMeta: metav1.ObjectMeta{GenerateName: change.verb + "-" + q.Name + "-", Namespace: ns},
		Spec: busv1alpha1.CommandSpec{Action: change.action, Target: busv1alpha1.Target{Name: q.Name},
			Reason: flags.reason, Message: flags.message},
	}
	name := cmd.GenerateName + "<generated>"
	if !flags.mode.client() {
		created, err := o.queues.BusV1alpha1().Commands(ns).Create(ctx, cmd, metav1.CreateOptions{DryRun: flags.mode.option()})
		if err != nil {
			return fmt.Errorf("issuing %s for queue %q: %w", change.action, q.Name, err)
		}
		if created.Name != "" {
			name = created.Name
		}
	}
	_, err = fmt.Fprintf(o.Out, "command/%s created: %s %s%s\n", name, change.action, q.Name, flags.mode.suffix())
	return err
}

// waitFor polls the queue until its status shows state, saying what a closing queue still waits for.
func (o *Options) waitFor(ctx context.Context, name string, state schedulingv1beta1.QueueState, timeout time.Duration) error {
	var last *schedulingv1beta1.Queue
	said := ""
	err := wait.PollUntilContextTimeout(ctx, pollInterval, timeout, true, func(context.Context) (bool, error) {
		// Each read gets the caller's context: the time-out bounds the waiting, not a read under way.
		q, err := o.getQueue(ctx, name)
		if err != nil {
			return false, err
		}
		last = q
		if q.Status.State == state {
			return true, nil
		}
		if progress := activeMessage(q); q.Status.State == schedulingv1beta1.QueueStateClosing && progress != said {
			said = progress
			if _, err := fmt.Fprintf(o.Out, "queue/%s is Closing: %s\n", name, progress); err != nil {
				return false, err
			}
		}
		return false, nil
	})
	if err == nil {
		_, err = fmt.Fprintf(o.Out, "queue/%s is %s\n", name, state)
		return err
	}
	if !wait.Interrupted(err) || last == nil {
		return err
	}
	return fmt.Errorf("timed out after %s waiting for queue %q to be %s: it is %s (%s)",
		timeout, name, state, last.EffectiveState(), activeMessage(last))
}

// activeMessage is what the queue's Active condition says, or "no status yet".
func activeMessage(q *schedulingv1beta1.Queue) string {
	if c := meta.FindStatusCondition(q.Status.Conditions, "Active"); c != nil {
		return c.Message
	}
	return "no status yet"
}
