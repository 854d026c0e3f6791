package accounting

import (
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
