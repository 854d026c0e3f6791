package accounting

import (
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/queue-scheduler/queue-scheduler/pkg/timeline"
)

// RuntimeBound is how long a pod may run at most: its OwnBound, else, for a pod of queue-scheduler,
// its queue's defaultActiveDeadlineSeconds, which the webhook writes into the pods it admits (a pod
// that came past it is counted as bound by it all the same). The zero Bound is none: the pod may
// run for ever.
func (a *Accounting) RuntimeBound(pod *v1.Pod) timeline.Bound {
	b := a.OwnBound(pod)
	if b != (timeline.Bound{}) || !isQueuePod(pod) {
		return b
	}
	if queue, err := a.QueueOf(pod); err == nil {
		if s := a.DefaultDeadline(queue); s != nil {
			b.After = seconds(*s)
		}
	}
	return b
}

// OwnBound is the bound a pod sets itself: its spec.activeDeadlineSeconds, counted from its start;
// its Job's, counted from the Job's start (from the pod's while the Job has not started); the
// earlier of the two.
func (a *Accounting) OwnBound(pod *v1.Pod) timeline.Bound {
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
