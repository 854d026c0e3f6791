package accounting

import (
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/queue-scheduler/queue-scheduler/pkg/timeline"
)

// RuntimeBound is how long a pod may run at most, by what stops it and no one can raise: its own
// spec.activeDeadlineSeconds, counted from its start (the kubelet ends it then; a pod's may only come
// down), plus its termination grace period, which it may take to stop. A Job's
// activeDeadlineSeconds, which may be raised or removed at any time, and a queue's
// defaultActiveDeadlineSeconds reach the pod through the webhook, which writes them into the pod's
// spec: a pod that came past the webhook without a bound has none, as nothing it cannot change
// would stop it. The zero Bound is none: the pod may run for ever.
func (a *Accounting) RuntimeBound(pod *v1.Pod) timeline.Bound {
	var b timeline.Bound
	if s := pod.Spec.ActiveDeadlineSeconds; s != nil {
		b.After = seconds(*s)
		b.Grace = seconds(v1.DefaultTerminationGracePeriodSeconds)
		if g := pod.Spec.TerminationGracePeriodSeconds; g != nil {
			b.Grace = seconds(*g)
		}
	}
	return b
}

// DefaultDeadline is the queue's defaultActiveDeadlineSeconds, or nil.
func (a *Accounting) DefaultDeadline(queue string) *int64 {
	if q, ok := a.Queue(queue); ok {
		return q.Spec.DefaultActiveDeadlineSeconds
	}
	return nil
}

// RunningEnd is when a pod on a node ends at the latest, by its RuntimeBound, counted from its start
// (from now when it has not started yet); zero when never.
func (a *Accounting) RunningEnd(pod *v1.Pod, now time.Time) time.Time {
	start := now
	if pod.Status.StartTime != nil {
		start = pod.Status.StartTime.Time
	}
	return a.RuntimeBound(pod).End(start)
}

func seconds(s int64) time.Duration { return time.Duration(s) * time.Second }
