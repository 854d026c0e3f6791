package webhook

import (
	"context"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting/accountingtest"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned/fake"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// A PodGroup created a moment before its first pod may not be in the cache when the pod is admitted:
// the pod still gets its PodGroup's queue label (read from the API server), and a queue label that
// contradicts it is refused. A pod whose PodGroup does not exist yet gets no label.
func TestPodOfAPodGroupNotCachedYet(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kube := kubefake.NewClientset()
	acct, _ := accountingtest.Start(ctx, t, kube, util.MakeQueue("team").Obj())
	// Created after the caches synced, and never watched by them: only the API server holds it.
	acct.Client = fake.NewSimpleClientset(util.MakeQueue("team").Obj(), util.MakePodGroup("ns", "trainer").Queue("team").Obj())
	s := &Server{acct: acct, kube: kube, gangs: func(schedulingv1beta1.GangSource) bool { return true }}
	request := func(t *testing.T, name, group, queue string) *admissionv1.AdmissionRequest {
		t.Helper()
		pod := util.MakePod("ns", name).SchedulerName(schedulingv1beta1.SchedulerName).Label(schedulingv1beta1.PodGroupLabel, group).Obj()
		if queue != "" {
			pod.Labels[schedulingv1beta1.QueueLabel] = queue
		}
		raw, err := json.Marshal(pod)
		if err != nil {
			t.Fatal(err)
		}
		return &admissionv1.AdmissionRequest{Operation: admissionv1.Create, Namespace: "ns", Object: runtime.RawExtension{Raw: raw}}
	}

	d, err := s.mutatePod(ctx, request(t, "worker-0", "trainer", ""))
	if err != nil {
		t.Fatal(err)
	}
	want := []patchOp{{Op: "add", Path: "/metadata/labels/scheduling.queue-scheduler.io~1queue", Value: "team"}}
	if diff := cmp.Diff(want, d.patch); diff != "" {
		t.Errorf("pod of a PodGroup the cache does not hold yet (-want,+got):\n%s", diff)
	}
	if d, err := s.mutatePod(ctx, request(t, "early", "later", "")); err != nil || len(d.patch) != 0 {
		t.Errorf("pod of a PodGroup not created yet: patch %v, %v; want none", d.patch, err)
	}
	v, err := s.validatePod(ctx, request(t, "worker-1", "trainer", "other"))
	if err != nil || len(v.errs) != 1 {
		t.Errorf("pod naming a queue other than its PodGroup's: %v, %v; want one refusal", v.errs, err)
	}
}

// A pod that sets no activeDeadlineSeconds gets its Job's, as the time the Job has left (within
// what a pod may set), else its queue's defaultActiveDeadlineSeconds; a pod that sets its own is left
// as it is, and so is one whose Job cannot be read, with a warning.
func TestPodGetsTheDeadlineThatStopsIt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	bounded := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "bounded"}, Spec: batchv1.JobSpec{ActiveDeadlineSeconds: ptr.To[int64](7200)}}
	started := bounded.DeepCopy()
	started.Name, started.Status.StartTime = "started", ptr.To(metav1.NewTime(now.Add(-1000*time.Second)))
	over := started.DeepCopy()
	over.Name, over.Spec.ActiveDeadlineSeconds = "over", ptr.To[int64](600)
	endless := bounded.DeepCopy()
	endless.Name, endless.Spec.ActiveDeadlineSeconds = "endless", ptr.To[int64](math.MaxInt64)
	open := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "open"}}
	kube := kubefake.NewClientset(bounded, started, over, endless, open)
	limited := util.MakeQueue("limited").Obj()
	limited.Spec.DefaultActiveDeadlineSeconds = ptr.To[int64](3600)
	acct, _ := accountingtest.StartWith(ctx, t, kube, accounting.Config{Clock: clocktesting.NewFakeClock(now)}, limited, util.MakeQueue("free").Obj())
	s := &Server{acct: acct, kube: kube, gangs: func(schedulingv1beta1.GangSource) bool { return true }}
	request := func(t *testing.T, queue string, own *int64, job string) *admissionv1.AdmissionRequest {
		t.Helper()
		pod := util.MakePod("ns", "p").SchedulerName(schedulingv1beta1.SchedulerName).Label(schedulingv1beta1.QueueLabel, queue).Obj()
		pod.Spec.ActiveDeadlineSeconds = own
		if job != "" {
			pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job, Controller: ptr.To(true)}}
		}
		raw, err := json.Marshal(pod)
		if err != nil {
			t.Fatal(err)
		}
		return &admissionv1.AdmissionRequest{Operation: admissionv1.Create, Namespace: "ns", Object: runtime.RawExtension{Raw: raw}}
	}
	deadline := func(seconds int64) []patchOp {
		return []patchOp{{Op: "add", Path: "/spec/activeDeadlineSeconds", Value: seconds}}
	}
	defaulted := deadline(3600)
	for _, c := range []struct {
		name, queue string
		own         *int64
		job         string
		want        []patchOp
	}{
		{"no bound", "limited", nil, "", defaulted},
		{"its own bound", "limited", ptr.To[int64](60), "", nil},
		{"its Job's bound, the Job not started", "limited", nil, "bounded", deadline(7200)},
		{"its Job's bound, the Job started", "free", nil, "started", deadline(6200)},
		{"its Job's bound, passed", "limited", nil, "over", deadline(1)},
		{"its Job's bound, beyond a pod's most", "limited", nil, "endless", deadline(math.MaxInt32)},
		{"its own bound and its Job's", "limited", ptr.To[int64](60), "bounded", nil},
		{"a Job without a bound", "limited", nil, "open", defaulted},
		{"a Job that cannot be read", "limited", nil, "missing", nil},
		{"a queue without a default", "free", nil, "", nil},
	} {
		d, err := s.mutatePod(ctx, request(t, c.queue, c.own, c.job))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(c.want, d.patch); diff != "" {
			t.Errorf("%s (-want,+got):\n%s", c.name, diff)
		}
		if unread := c.job == "missing"; unread != (len(d.warnings) == 1) {
			t.Errorf("%s: warnings %q", c.name, d.warnings)
		}
	}
}
