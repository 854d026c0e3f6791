package controller

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	busv1alpha1 "github.com/queue-scheduler/queue-scheduler/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/metrics"
	"github.com/queue-scheduler/queue-scheduler/pkg/rules"
)

// LastCommandAnnotation on a queue holds the UID of the last Command applied to it, so that a Command
// seen again after a crash or a hand-over is not applied twice.
const LastCommandAnnotation = busv1alpha1.GroupName + "/last-command"

// outcome is what a Command does to its queue.
type outcome struct {
	state   schedulingv1beta1.QueueState
	apply   bool   // set spec.state to state
	ignored string // why the Command is ignored, when it is
	reason  string // the Event's reason
}

// decide applies the state table's rules for Commands to a queue.
func decide(action busv1alpha1.Action, q *schedulingv1beta1.Queue) outcome {
	current := q.EffectiveState()
	switch action {
	case busv1alpha1.OpenQueue:
		return outcome{state: schedulingv1beta1.QueueStateOpen, apply: true, reason: "QueueOpened"}
	case busv1alpha1.CloseQueue:
		return outcome{state: schedulingv1beta1.QueueStateClosed, apply: true, reason: "QueueClosed"}
	case busv1alpha1.SuspendQueue:
		if current == schedulingv1beta1.QueueStateClosed {
			return outcome{ignored: "the queue is Closed: only OpenQueue leaves Closed", reason: "CommandIgnored"}
		}
		return outcome{state: schedulingv1beta1.QueueStateSuspended, apply: true, reason: "QueueSuspended"}
	case busv1alpha1.ResumeQueue:
		switch {
		case current == schedulingv1beta1.QueueStateClosed:
			return outcome{ignored: "the queue is Closed: only OpenQueue leaves Closed", reason: "CommandIgnored"}
		case q.Spec.State != schedulingv1beta1.QueueStateSuspended:
			return outcome{ignored: fmt.Sprintf("the queue is %s, not Suspended", current), reason: "CommandIgnored"}
		}
		return outcome{state: schedulingv1beta1.QueueStateOpen, apply: true, reason: "QueueResumed"}
	}
	return outcome{ignored: fmt.Sprintf("unknown action %q", action), reason: "CommandRejected"}
}

// syncCommand applies a Command to its queue exactly once, records an Event, and deletes it.
func (c *Controller) syncCommand(ctx context.Context, key string) error {
	namespace, name, err := splitKey(key)
	if err != nil {
		return nil
	}
	cmd, err := c.acct.Store.Commands().Commands(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	q, ok := c.acct.Store.Queue(cmd.Spec.Target.Name)
	if !ok {
		// Admission saw the queue: a queue created a moment ago may not be in the cache yet.
		_, err := c.acct.Client.SchedulingV1beta1().Queues().Get(ctx, cmd.Spec.Target.Name, metav1.GetOptions{})
		switch {
		case err == nil:
			return fmt.Errorf("queue %q of Command %s is not in the cache yet", cmd.Spec.Target.Name, key)
		case !apierrors.IsNotFound(err):
			return err
		}
		c.recorder.Eventf(cmd, v1.EventTypeWarning, "QueueNotFound", "%s not applied: queue %q does not exist", cmd.Spec.Action, cmd.Spec.Target.Name)
		countCommand(cmd, "QueueNotFound")
		return c.deleteCommand(ctx, cmd)
	}
	if errs := rules.ValidateCommand(cmd, c.adminNamespace, c.acct.Rules()); len(errs) > 0 {
		// Admission was bypassed: the Command may not operate this queue.
		c.recorder.Eventf(cmd, v1.EventTypeWarning, "CommandForbidden", "%s not applied: %v", cmd.Spec.Action, errs.ToAggregate())
		countCommand(cmd, "Forbidden")
		return c.deleteCommand(ctx, cmd)
	}
	if q.Annotations[LastCommandAnnotation] != string(cmd.UID) {
		if err := c.apply(ctx, cmd, q); err != nil {
			return err
		}
	}
	return c.deleteCommand(ctx, cmd)
}

// apply records the Command's outcome on the queue: its spec.state and the Command's UID in one write.
func (c *Controller) apply(ctx context.Context, cmd *busv1alpha1.Command, q *schedulingv1beta1.Queue) error {
	o := decide(cmd.Spec.Action, q)
	updated := q.DeepCopy()
	if updated.Annotations == nil {
		updated.Annotations = map[string]string{}
	}
	updated.Annotations[LastCommandAnnotation] = string(cmd.UID)
	before := q.Spec.State
	if o.apply {
		updated.Spec.State = o.state
	}
	_, err := c.acct.Client.SchedulingV1beta1().Queues().Update(ctx, updated, metav1.UpdateOptions{})
	if apierrors.IsInvalid(err) || apierrors.IsForbidden(err) {
		// Admission refused the new state: retrying cannot help, so say why and drop the Command.
		c.recorder.Eventf(q, v1.EventTypeWarning, "CommandRejected", "%s by Command %s/%s rejected: %v",
			cmd.Spec.Action, cmd.Namespace, cmd.Name, err)
		countCommand(cmd, "Rejected")
		return nil
	}
	if err != nil {
		return err
	}
	klog.FromContext(ctx).V(2).Info("Applied command", "command", klog.KObj(cmd), "queue", q.Name, "action", cmd.Spec.Action, "ignored", o.ignored)
	c.recordOutcome(cmd, updated, o, before)
	return nil
}

func (c *Controller) recordOutcome(cmd *busv1alpha1.Command, q *schedulingv1beta1.Queue, o outcome, before schedulingv1beta1.QueueState) {
	by := fmt.Sprintf("by Command %s/%s", cmd.Namespace, cmd.Name)
	if cmd.Spec.Reason != "" {
		by += " (" + cmd.Spec.Reason + ")"
	}
	if cmd.Spec.Message != "" {
		by += ": " + cmd.Spec.Message
	}
	if o.ignored != "" {
		c.recorder.Eventf(q, v1.EventTypeWarning, o.reason, "%s ignored %s: %s", cmd.Spec.Action, by, o.ignored)
		countCommand(cmd, "Ignored")
		return
	}
	c.recorder.Eventf(q, v1.EventTypeNormal, o.reason, "%s %s: spec.state %s -> %s", cmd.Spec.Action, by, rules.StateOrOpen(before), o.state)
	countCommand(cmd, "Applied")
}

// countCommand counts a Command handled with result (Applied, Ignored, Rejected, Forbidden,
// QueueNotFound).
func countCommand(cmd *busv1alpha1.Command, result string) {
	metrics.Commands.WithLabelValues(string(cmd.Spec.Action), result).Inc()
}

func (c *Controller) deleteCommand(ctx context.Context, cmd *busv1alpha1.Command) error {
	err := c.acct.Client.BusV1alpha1().Commands(cmd.Namespace).Delete(ctx, cmd.Name, preconditionUID(cmd.UID))
	return ignoreNotFound(err)
}
