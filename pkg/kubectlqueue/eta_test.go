package kubectlqueue

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned/fake"
)

// eta NAME finds the PodGroup, QueueUnit or pod of that name, or else the pods whose controller has
// that name, or whose Job's controller has, the PodGroups they belong to and the QueueUnits that
// queue it: not those of a Job whose name only begins with it, nor those of a Job gone that had the
// name of one it runs. KIND narrows it to that kind of controller, a Job of batch/v1 only.
func TestETAFindsTheJobByItsPodsController(t *testing.T) {
	pending := func(kind visibilityv1beta1.WorkloadKind, name string) *visibilityv1beta1.PendingWorkload {
		return &visibilityv1beta1.PendingWorkload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: string(kind) + "." + name},
			Workload: visibilityv1beta1.WorkloadReference{Kind: kind, Name: name}}
	}
	jobPod := func(job, name string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{batchv1.JobNameLabel: job},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job, Controller: ptr.To(true)}}}}
	}
	// A pod that carries the Job's label but that another controller runs is not the Job's.
	impostor := jobPod("train", "train-impostor")
	impostor.OwnerReferences[0].Kind = "ReplicaSet"
	// A gang Job's pods wait as their PodGroup, which another gang API names.
	worker := jobPod("mpi", "mpi-worker-0")
	worker.Labels[schedulingv1beta1.SchedulerPluginsPodGroupLabel] = "mpi-gang"
	// So do a PyTorchJob's; a Job of another API group is not a batch Job.
	master := jobPod("bert", "bert-master-0")
	master.OwnerReferences[0].APIVersion, master.OwnerReferences[0].Kind = "kubeflow.org/v1", "PyTorchJob"
	master.Annotations = map[string]string{schedulingv1beta1.VolcanoGroupNameAnnotation: "bert-gang"}
	otherJob := jobPod("other", "other-0")
	otherJob.OwnerReferences[0].APIVersion = "example.com/v1"
	// A JobSet's pods are its Jobs'; a Job of the same name that another JobSet runs is not its, nor
	// a pod of a Job of that name gone before.
	ownedJob := func(name, kind, owner string) *batchv1.Job {
		return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name + "-uid"),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "jobset.x-k8s.io/v1alpha2", Kind: kind, Name: owner, Controller: ptr.To(true)}}}}
	}
	orphan := jobPod("set-w-0", "set-w-0-orphan")
	orphan.OwnerReferences[0].UID = "gone"
	o := &Options{
		queues: fake.NewSimpleClientset(pending(visibilityv1beta1.WorkloadPod, "train-x7k2p"), pending(visibilityv1beta1.WorkloadPod, "train-2-q9z4w"),
			pending(visibilityv1beta1.WorkloadPodGroup, "sweep"), pending(visibilityv1beta1.WorkloadPod, "sweep-0"),
			pending(visibilityv1beta1.WorkloadPod, "train-impostor"), pending(visibilityv1beta1.WorkloadQueueUnit, "train-unit"),
			pending(visibilityv1beta1.WorkloadPodGroup, "mpi-gang"), pending(visibilityv1beta1.WorkloadPodGroup, "other-gang"),
			pending(visibilityv1beta1.WorkloadPodGroup, "bert-gang"), pending(visibilityv1beta1.WorkloadPod, "other-0"),
			pending(visibilityv1beta1.WorkloadQueueUnit, "ray-unit"), pending(visibilityv1beta1.WorkloadPod, "set-w-0-abcde"),
			pending(visibilityv1beta1.WorkloadPod, "set-2-w-0-fghij"), pending(visibilityv1beta1.WorkloadPod, "nightly-1-klmno"),
			pending(visibilityv1beta1.WorkloadPod, "set-w-0-orphan"),
			&schedulingv1beta1.QueueUnit{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ray-unit"},
				Spec: schedulingv1beta1.QueueUnitSpec{ConsumerRef: v1.ObjectReference{APIVersion: "ray.io/v1", Kind: "RayJob", Name: "ray"}}},
			&schedulingv1beta1.QueueUnit{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "train-unit"},
				Spec: schedulingv1beta1.QueueUnitSpec{ConsumerRef: v1.ObjectReference{APIVersion: "batch/v1", Kind: "Job", Name: "train"}}}),
		kube: kubefake.NewClientset(jobPod("train", "train-x7k2p"), jobPod("train-2", "train-2-q9z4w"), jobPod("sweep", "sweep-0"), impostor, worker, master, otherJob,
			ownedJob("set-w-0", "JobSet", "set"), jobPod("set-w-0", "set-w-0-abcde"), ownedJob("set-2-w-0", "JobSet", "set-2"), jobPod("set-2-w-0", "set-2-w-0-fghij"),
			ownedJob("nightly-1", "CronJob", "nightly"), jobPod("nightly-1", "nightly-1-klmno"), orphan),
	}
	for _, c := range []struct {
		name string
		want []string
	}{
		{"train", []string{"train-impostor", "train-unit", "train-x7k2p"}},
		{"job/train", []string{"train-unit", "train-x7k2p"}},
		{"replicaset/train", []string{"train-impostor"}},
		{"job/train-2", []string{"train-2-q9z4w"}},
		{"Job/train", []string{"train-unit", "train-x7k2p"}},
		{"sweep", []string{"sweep"}},
		{"job/sweep", []string{"sweep-0"}},
		{"pod/sweep-0", []string{"sweep-0"}},
		{"pods/sweep-0", []string{"sweep-0"}},
		{"PodGroups/sweep", []string{"sweep"}},
		{"mpi", []string{"mpi-gang"}},
		{"job/mpi", []string{"mpi-gang"}},
		{"bert", []string{"bert-gang"}},
		{"pytorchjob/bert", []string{"bert-gang"}},
		{"PyTorchJobs/bert", []string{"bert-gang"}},
		{"job/bert", nil},
		{"ray", []string{"ray-unit"}},
		{"rayjob/ray", []string{"ray-unit"}},
		{"set", []string{"set-w-0-abcde"}},
		{"jobset/set", []string{"set-w-0-abcde"}},
		{"job/set-w-0", []string{"set-w-0-abcde", "set-w-0-orphan"}}, // Named itself, a Job is matched by its name alone.
		{"cronjob/set", nil},
		{"cronjobs/nightly", []string{"nightly-1-klmno"}},
		{"job/nightly", nil},
		{"other", []string{"other-0"}},
		{"job/other", nil},
		{"podgroup/train", nil},
		{"trai", nil},
		{"job/" + strings.Repeat("x", 64), nil},
	} {
		items, err := o.pendingNamed(context.Background(), c.name, "ns")
		var got []string
		for _, w := range items {
			got = append(got, w.Workload.Name)
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) || (err != nil) != (c.want == nil) {
			t.Errorf("eta %s: %v, %v; want %v", c.name, got, err, c.want)
		}
	}
}

// A user who may not list pods (or Jobs) is told that nothing waits under a name that is not pending
// work, and why, only when they asked for a kind of job.
func TestETAWithoutReadingPods(t *testing.T) {
	kube := kubefake.NewClientset()
	kube.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(v1.Resource("pods"), "", errors.New("no"))
	})
	o := &Options{kube: kube, queues: fake.NewSimpleClientset(&visibilityv1beta1.PendingWorkload{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pod.train-x7k2p"},
		Workload:   visibilityv1beta1.WorkloadReference{Kind: visibilityv1beta1.WorkloadPod, Name: "train-x7k2p"}})}
	if _, err := o.pendingNamed(context.Background(), "train", "ns"); err == nil || !strings.Contains(err.Error(), "no pending work named") {
		t.Errorf("eta train: %v, want no pending work named train", err)
	}
	if _, err := o.pendingNamed(context.Background(), "job/train", "ns"); !apierrors.IsForbidden(errors.Unwrap(err)) {
		t.Errorf("eta job/train: %v, want the pods' listing refused", err)
	}
	// Pods that a Job runs, read by one who may not list Jobs: the same for the Jobs' listing, which
	// the pods a PyTorchJob runs itself do not need.
	owned := func(name, apiVersion, kind, owner string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: owner, Controller: ptr.To(true)}}}}
	}
	kube = kubefake.NewClientset(owned("train-x7k2p", "batch/v1", "Job", "train-w-0"), owned("bert-0", "kubeflow.org/v1", "PyTorchJob", "bert"))
	kube.PrependReactor("list", "jobs", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(batchv1.Resource("jobs"), "", errors.New("no"))
	})
	o.kube = kube
	if _, err := o.pendingNamed(context.Background(), "train", "ns"); err == nil || !strings.Contains(err.Error(), "no pending work named") {
		t.Errorf("eta train, Jobs not readable: %v, want no pending work named train", err)
	}
	if _, err := o.pendingNamed(context.Background(), "jobset/train", "ns"); !apierrors.IsForbidden(errors.Unwrap(err)) ||
		!strings.Contains(err.Error(), "listing the Jobs of jobset ns/train") {
		t.Errorf("eta jobset/train: %v, want the Jobs' listing refused", err)
	}
	o.queues = fake.NewSimpleClientset(&visibilityv1beta1.PendingWorkload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pod.bert-0"},
		Workload: visibilityv1beta1.WorkloadReference{Kind: visibilityv1beta1.WorkloadPod, Name: "bert-0"}})
	if items, err := o.pendingNamed(context.Background(), "pytorchjob/bert", "ns"); err != nil || len(items) != 1 {
		t.Errorf("eta pytorchjob/bert, Jobs not readable: %v, %v; want its pod bert-0", items, err)
	}
}

// eta says what each expected start rests on: the default runtime, few runs learned or many, of
// which work, a guess past them all, a runtime bound; nothing for work that starts now or not
// within a week.
func TestETASaysWhatTheStartRestsOn(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *metav1.Time { return ptr.To(metav1.NewTime(now.Add(d))) }
	pending := func(name string, start *visibilityv1beta1.ExpectedStart) visibilityv1beta1.PendingWorkload {
		return visibilityv1beta1.PendingWorkload{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a"}, Queue: "team-a", PositionInQueue: 1,
			Workload: visibilityv1beta1.WorkloadReference{Kind: visibilityv1beta1.WorkloadPodGroup, Name: name}, ExpectedStart: start}
	}
	start := func(basis *visibilityv1beta1.RuntimeBasis) *visibilityv1beta1.ExpectedStart {
		return &visibilityv1beta1.ExpectedStart{P50: at(58 * time.Minute), P90: at(4 * time.Hour), ForecastTime: metav1.NewTime(now), RuntimeBasis: basis}
	}
	learned := func(runs int32, scope visibilityv1beta1.RuntimeScope) *visibilityv1beta1.RuntimeBasis {
		return &visibilityv1beta1.RuntimeBasis{Source: visibilityv1beta1.RuntimeLearned, Runs: runs, LearnedFrom: scope}
	}
	for _, tt := range []struct {
		name   string
		start  *visibilityv1beta1.ExpectedStart
		reason string
		want   []string // EXPECTED START, P90, BASIS
	}{
		{name: "a request above its queue's capability", reason: "ExceedsCapability", start: &visibilityv1beta1.ExpectedStart{ForecastTime: metav1.NewTime(now)},
			want: []string{"never", "-", "its request exceeds its queue's capability: it starts only once the capability is raised"}},
		{name: "the default runtime", start: start(&visibilityv1beta1.RuntimeBasis{Source: visibilityv1beta1.RuntimeDefault}),
			want: []string{"in 58m", "in 4h", "default runtime: nothing like the run it waits for has finished yet"}},
		{name: "few runs", start: start(learned(3, visibilityv1beta1.ScopeKind)), want: []string{"in 58m", "in 4h", "learned from only 3 runs of its kind"}},
		{name: "many runs, of other work", start: start(learned(120, visibilityv1beta1.ScopeQueue)),
			want: []string{"in 58m", "in 4h", "learned from 120 runs of its queue's work"}},
		{name: "many runs of its shape", start: start(learned(10, visibilityv1beta1.ScopeShape)), want: []string{"in 58m", "in 4h", "learned from 10 runs of its shape"}},
		{name: "a run past those learned", start: start(&visibilityv1beta1.RuntimeBasis{Source: visibilityv1beta1.RuntimeOutlived, Runs: 12,
			LearnedFrom: visibilityv1beta1.ScopeAll}), want: []string{"in 58m", "in 4h", "a guess: the run it waits for has outlived all 12 runs of any work"}},
		{name: "a run past the default", start: start(&visibilityv1beta1.RuntimeBasis{Source: visibilityv1beta1.RuntimeOutlived}),
			want: []string{"in 58m", "in 4h", "a guess: the run it waits for has outlived the default runtime"}},
		{name: "a runtime bound", start: start(&visibilityv1beta1.RuntimeBasis{Source: visibilityv1beta1.RuntimeBounded}),
			want: []string{"in 58m", "in 4h", "runtime bound (activeDeadlineSeconds)"}},
		{name: "starting now", start: &visibilityv1beta1.ExpectedStart{P50: at(0), P90: at(0), ForecastTime: metav1.NewTime(now)},
			want: []string{"now", "now", "-"}},
		{name: "not within a week", start: &visibilityv1beta1.ExpectedStart{ForecastTime: metav1.NewTime(now)},
			want: []string{"not within a week", "not within a week", "-"}},
		{name: "not forecast yet", want: []string{"-", "-", "-"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			o := &Options{IOStreams: genericiooptions.IOStreams{Out: &out}, Now: func() time.Time { return now }}
			item := pending("train", tt.start)
			item.Reason = tt.reason
			if err := o.writeETA([]visibilityv1beta1.PendingWorkload{item}); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if len(lines) != 2 || !strings.HasPrefix(lines[0], "NAMESPACE") || !strings.HasSuffix(lines[0], "BASIS") {
				t.Fatalf("printed\n%s\nwant a header ending in BASIS and a line", out.String())
			}
			got := regexp.MustCompile(` {3,}`).Split(strings.TrimSpace(lines[1]), -1)
			if diff := cmp.Diff(append([]string{"team-a", "podgroup/train", "team-a", "1"}, tt.want...), got); diff != "" {
				t.Errorf("the line's cells (-want,+got):\n%s\nprinted:\n%s", diff, out.String())
			}
		})
	}
}
