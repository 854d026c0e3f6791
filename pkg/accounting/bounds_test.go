package accounting

import (
	"math"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/queue-scheduler/queue-scheduler/pkg/timeline"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// A pod's runtime bound is what stops it and no one can raise: its own activeDeadlineSeconds, with
// its grace. Its Job's, which may be raised or removed at any time, counts only as the webhook wrote
// it into the pod: a pod of a bounded Job that came past the webhook has none.
func TestRuntimeBoundIsThePods(t *testing.T) {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j", UID: "j"},
		Spec:   batchv1.JobSpec{ActiveDeadlineSeconds: ptr.To[int64](60)},
		Status: batchv1.JobStatus{StartTime: ptr.To(metav1.Now())}}
	a := newTestAccounting(t, []runtime.Object{util.MakeQueue("root").Obj()}, job)
	owned := func(deadline, grace *int64) *v1.Pod {
		p := pod("a", "p", "1", "")
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "j", UID: "j", Controller: ptr.To(true)}}
		p.Spec.ActiveDeadlineSeconds, p.Spec.TerminationGracePeriodSeconds = deadline, grace
		return p
	}
	for _, c := range []struct {
		name string
		pod  *v1.Pod
		want timeline.Bound
	}{
		{"a bounded Job's pod with none of its own", owned(nil, nil), timeline.Bound{}},
		{"its own bound, the default grace", owned(ptr.To[int64](600), nil), timeline.Bound{After: 10 * time.Minute, Grace: 30 * time.Second}},
		{"its own bound and grace", owned(ptr.To[int64](600), ptr.To[int64](0)), timeline.Bound{After: 10 * time.Minute}},
	} {
		if got := a.RuntimeBound(c.pod); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// A new pod's deadline: its Job's time left, rounded up (all of it before the Job starts), else the
// queue's default; within what a pod may set, 1 to MaxInt32 seconds.
func TestDeadlineFor(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	job := func(seconds int64, startedAgo time.Duration) *batchv1.Job {
		j := &batchv1.Job{Spec: batchv1.JobSpec{ActiveDeadlineSeconds: ptr.To(seconds)}}
		if startedAgo > 0 {
			j.Status.StartTime = ptr.To(metav1.NewTime(now.Add(-startedAgo)))
		}
		return j
	}
	for _, c := range []struct {
		name         string
		job          *batchv1.Job
		queueDefault *int64
		want         *int64
	}{
		{"neither", nil, nil, nil},
		{"the queue's default", nil, ptr.To[int64](600), ptr.To[int64](600)},
		{"a Job without a deadline: the queue's", &batchv1.Job{}, ptr.To[int64](600), ptr.To[int64](600)},
		{"a Job not started: all of its deadline", job(300, 0), ptr.To[int64](600), ptr.To[int64](300)},
		{"a Job 100.5 s in: its time left, rounded up", job(300, 100500*time.Millisecond), nil, ptr.To[int64](200)},
		{"a Job past its deadline: a second", job(300, time.Hour), nil, ptr.To[int64](1)},
		{"a Job's zero: a second", job(0, 0), nil, ptr.To[int64](1)},
		{"a Job's beyond a pod's most", job(math.MaxInt64, 0), nil, ptr.To[int64](math.MaxInt32)},
		{"a queue's beyond a pod's most", nil, ptr.To[int64](math.MaxInt64), ptr.To[int64](math.MaxInt32)},
	} {
		got := DeadlineFor(c.job, c.queueDefault, now)
		if (got == nil) != (c.want == nil) || (got != nil && *got != *c.want) {
			t.Errorf("%s: %v, want %v", c.name, ptr.Deref(got, -1), ptr.Deref(c.want, -1))
		}
	}
}
