package accounting

import (
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/queue-scheduler/queue-scheduler/pkg/timeline"
)

// RuntimeBound is how long a pod may run at most, by what stops it: its own
// spec.activeDeadlineSeconds, counted from its start (the kubelet ends it then); its Job's, counted
// from the Job's start, or from the pod's while the Job has not started (the Job controller ends it
// then); the earlier of the two; plus its termination grace period, which it may take to stop. A
// queue's defaultActiveDeadlineSeconds reaches the pod through the webhook, which writes it into the
// pod's spec: a pod that came past the webhook without a bound has none, as nothing would stop it.
// The zero Bound is none: the pod may run for ever.
func (a *Accounting) RuntimeBound(pod *v1.Pod) timeline.Bound {
	var b timeline.Bound
	if s := pod.Spec.ActiveDeadlineSeconds; s != nil {
		b.After = seconds(*s)
	}
	for _, ref := range pod.OwnerReferences {
		job := a.ownerJob(pod.Namespace, ref)
		if job == nil || job.Spec.ActiveDeadlineSeconds == nil {
			continue
		}
		limit := seconds(*job.Spec.ActiveDeadlineSeconds)
		switch {
		case job.Status.StartTime != nil:
			b.By = job.Status.StartTime.Add(limit)
		case b.After == 0 || limit < b.After:
			b.After = limit
		}
	}
	if b.Bounded() {
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
