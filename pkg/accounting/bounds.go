package accounting

import (
	"math"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

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

// DeadlineFor is the activeDeadlineSeconds written into a new pod that sets none of its own (the
// webhook writes it; the forecast expects it of pods still to come): its batch/v1 Job's time left
// at now, when job is not nil and sets one, else queueDefault; nil for neither. It is within what a
// pod may set, 1 to MaxInt32 seconds: a Job may set any deadline (one beyond a pod's most, 68
// years, ends no pod sooner than that), and a queue stored before its schema said so must not make
// its pods impossible to create.
func DeadlineFor(job *batchv1.Job, queueDefault *int64, now time.Time) *int64 {
	seconds := queueDefault
	if job != nil && job.Spec.ActiveDeadlineSeconds != nil {
		seconds = ptr.To(jobTimeLeft(job, now))
	}
	if seconds == nil {
		return nil
	}
	return ptr.To(min(max(*seconds, 1), math.MaxInt32))
}

// jobTimeLeft is how many seconds a Job with activeDeadlineSeconds has left at now, rounded up: all
// of them while the Job has not started.
func jobTimeLeft(job *batchv1.Job, now time.Time) int64 {
	left := *job.Spec.ActiveDeadlineSeconds
	if job.Status.StartTime != nil {
		// Whole seconds gone, so that the rest rounds up; counted in seconds, so that no deadline
		// overflows a Duration.
		left -= int64(now.Sub(job.Status.StartTime.Time) / time.Second)
	}
	return left
}

// DefaultDeadline is the queue's defaultActiveDeadlineSeconds, or nil.
func (a *Accounting) DefaultDeadline(queue string) *int64 {
	if q, ok := a.Store.Queue(queue); ok {
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
