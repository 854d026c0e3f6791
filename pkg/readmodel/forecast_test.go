package readmodel

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic/dynamicinformer"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting/accountingtest"
	"github.com/queue-scheduler/queue-scheduler/pkg/forecast"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned/fake"
	"github.com/queue-scheduler/queue-scheduler/pkg/runtimes"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// A pending pod's expected start in the live view: when the running pod in its way ends by its
// runtime bound (its activeDeadlineSeconds and grace, counted from its start), at the median and
// at the 90th percentile alike; a pod that never fits has none.
func TestExpectedStartFollowsTheRuntimeBounds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := time.Now().Add(-100 * time.Second).Truncate(time.Second)
	pod := func(name, cpu, node string) *v1.Pod {
		p := util.MakePod("ns", name).UID(name).Label(schedulingv1beta1.QueueLabel, "q").
			Req(map[v1.ResourceName]string{v1.ResourceCPU: cpu}).Obj()
		p.Spec.NodeName = node
		return p
	}
	running := pod("running", "8", "n")
	running.Spec.ActiveDeadlineSeconds = ptr.To[int64](600)
	running.Status.Phase, running.Status.StartTime = v1.PodRunning, ptr.To(metav1.NewTime(started))
	waiting, huge := pod("waiting", "4", ""), pod("huge", "16", "")
	huge.CreationTimestamp = metav1.NewTime(time.Now().Add(time.Minute))
	kube := kubefake.NewClientset(util.MakeNode("n", "8", "16Gi"), running, waiting, huge)
	acct := startAccounting(t, ctx, fake.NewSimpleClientset(util.MakeQueue("q").Obj()), kube)
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return acct.Pods.PodCount("q") == 3 && acct.Synced(), nil
	}); err != nil {
		t.Fatalf("the accounting never counted the pods: %d", acct.Pods.PodCount("q"))
	}
	c := &Model{acct: acct}
	got, _ := c.PendingInQueue("q")
	if len(got) != 2 || got[0].Workload.Name != "waiting" || got[0].ExpectedStart == nil || got[0].ExpectedStart.P50 == nil {
		t.Fatalf("pending work %+v, want waiting first with an expected start", got)
	}
	end := started.Add(600*time.Second + 30*time.Second) // the bound and the default grace
	s := got[0].ExpectedStart
	if p50 := s.P50.Time; p50.Before(end) || p50.After(end.Add(forecastResolution)) || !s.P90.Equal(s.P50) {
		t.Errorf("waiting expected from %v (p90 %v), want the running pod's end %v, to within %s", p50, s.P90, end, forecastResolution)
	}
	if diff := cmp.Diff(&visibilityv1beta1.RuntimeBasis{Source: visibilityv1beta1.RuntimeBounded}, s.RuntimeBasis); diff != "" {
		t.Errorf("waiting for the running pod's bound: runtime basis (-want,+got):\n%s", diff)
	}
	if h := got[1].ExpectedStart; h == nil || h.P50 != nil || h.P90 != nil || h.RuntimeBasis != nil {
		t.Errorf("a pod larger than any node: expected start %+v, want none within the horizon, resting on nothing", h)
	}
}

// Finished pods teach the forecast their runtimes, for their queue and the kind of their job: once
// three have finished, their runtime replaces the default, for that kind and, by fallback, for the
// queue's work of other kinds, and for any work nothing closer is known of.
func TestRuntimesAreLearned(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	acct := startAccounting(t, ctx, fake.NewSimpleClientset(util.MakeQueue("q").Obj()), kubefake.NewClientset())
	c := &Model{acct: acct}
	now := time.Now()
	if r := c.runtimeOf(runtimes.Key{Queue: "q", Kind: "Job"}, now); r.Runtime != defaultRuntime || r.bounded != defaultRuntime {
		t.Fatalf("nothing finished: runtime %+v, want the default", r)
	}
	// A run past the default hour runs as long again as it has run; one short of it, the default.
	key := runtimes.Key{Queue: "q", Kind: "Job"}
	if r := c.runtimeAfter(key, now, 59*time.Minute); r.Runtime != defaultRuntime {
		t.Errorf("nothing finished, 59m run: runtime %+v, want the default", r)
	}
	if r := c.runtimeAfter(key, now, 2*time.Hour); r.Runtime != (forecast.Runtime{P50: 4 * time.Hour, P90: 20 * time.Hour, Basis: forecast.Basis{Source: forecast.SourceOutlived}}) || r.bounded != r.Runtime {
		t.Errorf("nothing finished, 2h run: runtime %+v, want 4h and 20h at the 90th percentile", r)
	}
	for i := range 3 {
		p := util.MakePod("ns", "done").UID("done").Label(schedulingv1beta1.QueueLabel, "q").Obj()
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "sweep", Controller: ptr.To(true)}}
		p.Status.Phase, p.Status.StartTime = v1.PodSucceeded, ptr.To(metav1.NewTime(now.Add(-time.Duration(10+i)*time.Minute)))
		p.Status.ContainerStatuses = []v1.ContainerStatus{{State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
			FinishedAt: metav1.NewTime(now.Add(-time.Duration(i) * time.Minute))}}}}
		c.LearnRuntime(p)
	}
	for _, kind := range []string{"Job", "PyTorchJob"} {
		if r := c.runtimeOf(runtimes.Key{Queue: "q", Kind: kind}, now); r.P50 < 8*time.Minute || r.P50 > 12*time.Minute {
			t.Errorf("three Job pods of 10 minutes: runtime of q's %s %+v, want about 10m", kind, r)
		}
	}
	other := c.runtimeOf(runtimes.Key{Queue: "other", Kind: "PyTorchJob"}, now)
	if other.P50 < 8*time.Minute || other.P50 > 12*time.Minute || other.bounded != defaultRuntime {
		t.Errorf("another queue's PyTorchJobs, nothing like them finished: %+v, want all the work's, about 10m", other)
	}
	// Pods bounded to half an hour: q's Jobs are expected to run as q's Jobs ran; the other queue's
	// PyTorchJobs, of which nothing alike finished, as work nothing is known of (the default hour)
	// within their bound. Bounded to a day, the default hour.
	bounded := func(seconds int64) *v1.Pod {
		p := util.MakePod("ns", "bounded").Label(schedulingv1beta1.QueueLabel, "other").Obj()
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "kubeflow.org/v1", Kind: "PyTorchJob", Name: "train", Controller: ptr.To(true)}}
		p.Spec.SchedulerName, p.Spec.ActiveDeadlineSeconds, p.Spec.TerminationGracePeriodSeconds = schedulingv1beta1.SchedulerName, ptr.To(seconds), ptr.To[int64](0)
		return p
	}
	halfHour, day := bounded(1800), bounded(86400)
	if r := boundedRuntime(c.runtimeOf(runtimes.Key{Queue: "q", Kind: "Job"}, now), []*v1.Pod{halfHour}); r.P50 < 8*time.Minute || r.P50 > 12*time.Minute {
		t.Errorf("q's Jobs bounded to half an hour: runtime %+v, want about 10m, as learned", r)
	}
	if r := boundedRuntime(other, []*v1.Pod{halfHour}); r != (forecast.Runtime{P50: 30 * time.Minute, P90: 30 * time.Minute, Basis: forecast.Basis{Source: forecast.SourceBounded}}) {
		t.Errorf("the other queue's PyTorchJobs bounded to half an hour: runtime %+v, want the half hour", r)
	}
	if r := boundedRuntime(other, []*v1.Pod{day}); r != defaultRuntime {
		t.Errorf("the other queue's PyTorchJobs bounded to a day: runtime %+v, want the default", r)
	}
	// Running, started 5 minutes ago: they end as they would pending.
	started := now.Add(-5 * time.Minute)
	for _, p := range []*v1.Pod{halfHour, day} {
		p.Spec.NodeName, p.Status.Phase, p.Status.StartTime = "n", v1.PodRunning, ptr.To(metav1.NewTime(started))
	}
	if e := c.endsOf(halfHour, now); !e.P50.Equal(started.Add(30*time.Minute)) || !e.P90.Equal(e.P50) {
		t.Errorf("a running PyTorchJob pod of the other queue bounded to half an hour: ends %+v, want at its bound", e)
	}
	if e := c.endsOf(day, now); !e.P50.Equal(started.Add(defaultRuntime.P50)) || !e.P90.Equal(started.Add(defaultRuntime.P90)) {
		t.Errorf("a running PyTorchJob pod of the other queue bounded to a day: ends %+v, want after the default runtime", e)
	}
}

// The kind a runtime is learned under is the job's: a PodGroup's or a pod's controller, a
// QueueUnit's consumer; the object's own kind without one.
func TestKindsOfWork(t *testing.T) {
	owned := []metav1.OwnerReference{{Kind: "Other"}, {Kind: "PyTorchJob", Controller: ptr.To(true)}}
	if k := podGroupKind(&schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{OwnerReferences: owned}}); k != "PyTorchJob" {
		t.Errorf("a PyTorchJob's PodGroup: %s", k)
	}
	if k := podGroupKind(nil); k != "PodGroup" {
		t.Errorf("a gang without its PodGroup: %s", k)
	}
	unit := util.MakeQueueUnit("ns", "u", "q", "sweep").Obj()
	unit.Spec.ConsumerRef.Kind = "RayJob"
	if k := unitKind(unit); k != "RayJob" {
		t.Errorf("a RayJob's QueueUnit: %s", k)
	}
	if k := controllerKind(nil, "Pod"); k != "Pod" {
		t.Errorf("a pod of no controller: %s", k)
	}
}

// Pods of one kind in one queue are learned by shape, what they ask for and their runtime bound: of
// bare pods of 1 cpu that ran 2 minutes and of 2 cpus that ran 8, a running pod of each shape is
// expected to end as its own shape ran, not at the runs' mean; a pod of a shape not learned yet, as
// the queue's pods ran.
func TestRuntimesAreLearnedByShape(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	acct := startAccounting(t, ctx, fake.NewSimpleClientset(util.MakeQueue("q").Obj()), kubefake.NewClientset())
	c := &Model{acct: acct}
	now := time.Now().Truncate(time.Second)
	pod := func(cpu string, bound int64) *v1.Pod {
		p := util.MakePod("ns", "p").UID("p").Label(schedulingv1beta1.QueueLabel, "q").Req(map[v1.ResourceName]string{v1.ResourceCPU: cpu}).Obj()
		p.Spec.SchedulerName = schedulingv1beta1.SchedulerName
		if bound > 0 {
			p.Spec.ActiveDeadlineSeconds, p.Spec.TerminationGracePeriodSeconds = ptr.To(bound), ptr.To[int64](0)
		}
		return p
	}
	for cpu, runtime := range map[string]time.Duration{"1": 2 * time.Minute, "2": 8 * time.Minute} {
		for range 3 {
			p := pod(cpu, 0)
			p.Status.Phase, p.Status.StartTime = v1.PodSucceeded, ptr.To(metav1.NewTime(now.Add(-runtime)))
			p.Status.ContainerStatuses = []v1.ContainerStatus{{State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{FinishedAt: metav1.NewTime(now)}}}}
			c.LearnRuntime(p)
		}
	}
	if k := c.runtimeKey("q", "Pod", pod("1", 600)); k.Shape != "cpu=1000m,bound="+fmt.Sprint(runtimes.BucketOf(10*time.Minute)) {
		t.Errorf("the shape of a pod of 1 cpu bound to 10 minutes: %q", k.Shape)
	}
	// A batch/v1 Job's pod is bound by the time its Job has left, which differs from pod to pod.
	jobPod := pod("1", 600)
	jobPod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "j", Controller: ptr.To(true)}}
	if k := c.runtimeKey("q", "Job", jobPod); k.Shape != "cpu=1000m," {
		t.Errorf("the shape of a Job's pod of 1 cpu bound to 10 minutes: %q, want its requests alone", k.Shape)
	}
	// Pending work of both shapes, a gang's master and workers say, runs as long as the longer.
	if r := c.workRuntime("q", "Pod", []*v1.Pod{pod("1", 0), pod("2", 0)}, now); r.P50 < 6*time.Minute || r.P50 > 10*time.Minute {
		t.Errorf("work of both shapes: runtime %+v, want about 8m", r)
	}
	started := now.Add(-time.Minute)
	for _, running := range []struct {
		name string
		pod  *v1.Pod
		want time.Duration
	}{
		{"1 cpu", pod("1", 0), 2 * time.Minute},
		{"2 cpus", pod("2", 0), 8 * time.Minute},
		{"1 cpu, bounded to an hour: not learned yet", pod("1", 3600), 5 * time.Minute},
	} {
		running.pod.Spec.NodeName, running.pod.Status.Phase, running.pod.Status.StartTime = "n", v1.PodRunning, ptr.To(metav1.NewTime(started))
		if got := c.endsOf(running.pod, now).P50.Sub(started); got < running.want*8/10 || got > running.want*12/10 {
			t.Errorf("a running pod of %s: expected to run %s, want about %s", running.name, got, running.want)
		}
	}
}

// The runtimes learned are checkpointed into the queue's status, and a read model started afresh
// (a restart, a new leader) resumes from them: it estimates as the one that learned them did, and a
// run that ended by the checkpoint, told again, is not counted twice.
func TestRuntimesSurviveARestart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	acct := syncedAccounting(t, ctx, fake.NewSimpleClientset(util.MakeQueue("q").Obj()))
	first := &Model{acct: acct, clock: acct.Clock()}
	// To the second, as the API serves a container's end and the checkpoint writes its time: a run
	// that ends within the checkpoint's second after it began would be told again as new.
	now := time.Now().Truncate(time.Second)
	done := func(i int) *v1.Pod {
		p := util.MakePod("ns", "done").UID("done").Label(schedulingv1beta1.QueueLabel, "q").Req(map[v1.ResourceName]string{v1.ResourceCPU: "2"}).Obj()
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "sweep", Controller: ptr.To(true)}}
		p.Status.Phase, p.Status.StartTime = v1.PodSucceeded, ptr.To(metav1.NewTime(now.Add(-time.Duration(20+i)*time.Minute)))
		p.Status.ContainerStatuses = []v1.ContainerStatus{{State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
			FinishedAt: metav1.NewTime(now.Add(-time.Duration(i) * time.Minute))}}}}
		return p
	}
	for i := range 3 {
		first.LearnRuntime(done(i))
	}
	q, _ := acct.Store.Queue("q")
	checkpoint, due := first.RuntimesCheckpoint(q, time.Minute)
	if checkpoint == nil || len(checkpoint.Kinds) != 1 || checkpoint.Kinds[0].Kind != "Job" || len(checkpoint.Kinds[0].Shapes) != 1 || due <= 0 {
		t.Fatalf("checkpoint %+v (next in %s); want the Job runs, of one shape, and a next one", checkpoint, due)
	}
	shaped := first.runtimeKey("q", "Job", done(0))

	stored := util.MakeQueue("q").Obj()
	stored.Status.Runtimes = checkpoint
	restarted := &Model{acct: syncedAccounting(t, ctx, fake.NewSimpleClientset(stored))}
	want := first.runtimeOf(runtimes.Key{Queue: "q", Kind: "Job"}, now)
	if got := restarted.runtimeOf(runtimes.Key{Queue: "q", Kind: "Job"}, now); got != want || got.Runtime == defaultRuntime {
		t.Errorf("after a restart: %+v, want %+v as learned before", got, want)
	}
	first.forecast.learnMu.Lock()
	wantShape, _ := first.learnerLocked().Estimate(shaped, now)
	first.forecast.learnMu.Unlock()
	restarted.forecast.learnMu.Lock()
	gotShape, _ := restarted.learnerLocked().Estimate(shaped, now)
	restarted.forecast.learnMu.Unlock()
	if gotShape.From != shaped || gotShape.P50 != wantShape.P50 || gotShape.P90 != wantShape.P90 || gotShape.Mean != wantShape.Mean {
		t.Errorf("the shape after a restart: %+v, want %+v as learned before", gotShape, wantShape)
	}
	restarted.LearnRuntime(done(0))
	if got := restarted.runtimeOf(runtimes.Key{Queue: "q", Kind: "Job"}, now); got != want {
		t.Errorf("a run in the checkpoint told again: %+v, want %+v", got, want)
	}
	q, _ = restarted.acct.Store.Queue("q")
	restarted.clock = restarted.acct.Clock()
	if again, _ := restarted.RuntimesCheckpoint(q, time.Minute); !apiequality.Semantic.DeepEqual(again, checkpoint) {
		t.Errorf("within the interval the checkpoint is rewritten: %+v", again)
	}
}

// startAccounting starts the accounting on the clients' informers, which run until ctx ends, and
// waits until it heard of every object they started with.
func startAccounting(t testing.TB, ctx context.Context, queues *fake.Clientset, kube *kubefake.Clientset) *accounting.Accounting {
	t.Helper()
	acct, _ := accountingtest.StartOn(ctx, t, queues, kube, accounting.Config{})
	return acct
}

// syncedAccounting is an accounting of the queues and no pods, once synced.
func syncedAccounting(t *testing.T, ctx context.Context, queues *fake.Clientset) *accounting.Accounting {
	t.Helper()
	return startAccounting(t, ctx, queues, kubefake.NewClientset())
}

// The live view's forecast is made again once it is the configured interval old, and served as it
// is until then; without one, every 10 seconds.
func TestLiveForecastsAtTheIntervalConfigured(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := clocktesting.NewFakeClock(time.Now())
	factory := informers.NewSharedInformerFactory(kubefake.NewClientset(), 0)
	acct, err := accounting.Start(ctx, fake.NewSimpleClientset(util.MakeQueue("q").Obj()), factory, accounting.Config{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	for _, tt := range []struct {
		configured, interval time.Duration
	}{{2 * time.Second, 2 * time.Second}, {0, forecastInterval}} {
		c := &Model{acct: acct, clock: clk}
		c.forecast.settings.Interval = tt.configured
		first := c.ExpectedStarts().at
		clk.Step(tt.interval - time.Millisecond)
		if at := c.ExpectedStarts().at; !at.Equal(first) {
			t.Errorf("interval %v: a new forecast after %v", tt.configured, tt.interval-time.Millisecond)
		}
		clk.Step(time.Millisecond)
		if at := c.ExpectedStarts().at; !at.Equal(clk.Now()) {
			t.Errorf("interval %v: the forecast of %v served at %v, want a new one", tt.configured, at, clk.Now())
		}
	}
}

// A running pod being deleted ends by its deletionTimestamp at the latest, its queue's or another
// scheduler's; its runtime bound stands when it comes first, and a deadline past is now.
func TestDeletedPodsEndByTheirDeadline(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := &Model{acct: syncedAccounting(t, ctx, fake.NewSimpleClientset(util.MakeQueue("q").Obj()))}
	now := time.Now().Truncate(time.Second)
	running := func(scheduler string, deadline *int64, deleting time.Duration) *v1.Pod {
		p := util.MakePod("ns", "p").UID("p").Label(schedulingv1beta1.QueueLabel, "q").Obj()
		p.Spec.SchedulerName, p.Spec.NodeName, p.Spec.ActiveDeadlineSeconds = scheduler, "n", deadline
		p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](0)
		p.Status.Phase, p.Status.StartTime = v1.PodRunning, ptr.To(metav1.NewTime(now.Add(-time.Minute)))
		p.DeletionTimestamp = ptr.To(metav1.NewTime(now.Add(deleting)))
		return p
	}
	for _, tt := range []struct {
		name string
		pod  *v1.Pod
		want time.Time
	}{
		{"the queue's, unbounded", running(schedulingv1beta1.SchedulerName, nil, 30*time.Second), now.Add(30 * time.Second)},
		{"another scheduler's, unbounded", running(v1.DefaultSchedulerName, nil, 30*time.Second), now.Add(30 * time.Second)},
		{"bounded to end first", running(schedulingv1beta1.SchedulerName, ptr.To[int64](90), 5*time.Minute), now.Add(30 * time.Second)},
		{"past its deadline", running(schedulingv1beta1.SchedulerName, nil, -time.Second), now},
	} {
		if e := c.endsOf(tt.pod, now); !e.P50.Equal(tt.want) || !e.P90.Equal(tt.want) {
			t.Errorf("%s: ends %v / %v, want %v", tt.name, e.P50, e.P90, tt.want)
		}
	}
}

// Work whose pods are not there yet runs in the forecast within the bound its pods will get: a
// QueueUnit's Job's pod template's, else the one the webhook will write, the Job's
// activeDeadlineSeconds (a second at least) or the queue's defaultActiveDeadlineSeconds; with none of
// them, no bound.
func TestWorkWithoutPodsIsBoundAsItsPodsWillBe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	job := func(name string, jobSeconds, podSeconds *int64) *unstructured.Unstructured {
		j := util.MakeJob("ns", name, 2, true)
		j.Spec.ActiveDeadlineSeconds, j.Spec.Template.Spec.ActiveDeadlineSeconds = jobSeconds, podSeconds
		j.Spec.Template.Spec.TerminationGracePeriodSeconds = ptr.To[int64](0)
		j.Spec.Template.Annotations = map[string]string{"example.com/note": name}
		// Its pods ask for 2 cpus, by their limits alone.
		j.Spec.Template.Spec.Containers = []v1.Container{{Name: "main", Resources: v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceCPU: resource.MustParse("2")}}}}
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(j)
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{Object: obj}
		u.SetAPIVersion("batch/v1")
		u.SetKind("Job")
		return u
	}
	jobs := schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{jobs: "JobList"},
		job("by-job", ptr.To[int64](300), nil), job("by-template", ptr.To[int64](300), ptr.To[int64](120)), job("unbound", nil, nil),
		job("zero", ptr.To[int64](0), nil))
	inf := dynamicinformer.NewDynamicSharedInformerFactory(client, 0).ForResource(jobs).Informer()
	go inf.Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("the Jobs' informer never synced")
	}
	tf := util.MakeQueueUnit("ns", "tf", "q", "tf").Obj()
	tf.Spec.ConsumerRef = v1.ObjectReference{APIVersion: "kubeflow.org/v1", Kind: "TFJob", Name: "tf"}
	queue := util.MakeQueue("q").Obj()
	queue.Spec.DefaultActiveDeadlineSeconds = ptr.To[int64](600)
	acct := syncedAccounting(t, ctx, fake.NewSimpleClientset(queue, util.MakeQueue("free").Obj(), tf,
		util.MakeQueueUnit("ns", "by-job", "q", "by-job").Obj(), util.MakeQueueUnit("ns", "by-template", "q", "by-template").Obj(),
		util.MakeQueueUnit("ns", "unbound", "free", "unbound").Obj(), util.MakeQueueUnit("ns", "zero", "free", "zero").Obj()))
	c := &Model{acct: acct, consumers: storeConsumers{inf.GetStore()}}
	bounds := map[string]time.Duration{}
	in := c.forecastInput(time.Now(), nil)
	for _, w := range in.pending {
		// A Job's pods to come have the shape its template makes: requests defaulted from limits,
		// and no bound, which the webhook writes as the Job's time left; and its annotations.
		if w.item.Workload.Name == "by-template" {
			pod := c.podToCome(w, time.Now())
			if k := c.runtimeKey("q", "Job", pod); k.Shape != "cpu=2000m," {
				t.Errorf("the shape of the pods to come of a Job asking for 2 cpus by their limits: %q", k.Shape)
			}
			if note := pod.Annotations["example.com/note"]; note != "by-template" {
				t.Errorf("the pods to come of a Job whose template notes %q: %q", "by-template", note)
			}
		}
	}
	for _, w := range in.snap.Pending {
		bounds[w.Key] = w.Bound
		if w.Bound > 0 && (w.Runtime.P50 > w.Bound || w.Runtime.P90 > w.Bound) {
			t.Errorf("%s: runtime %+v beyond its bound %s", w.Key, w.Runtime, w.Bound)
		}
	}
	want := map[string]time.Duration{
		"QueueUnit/ns/tf":          600*time.Second + 30*time.Second, // the queue's default, and the default grace
		"QueueUnit/ns/by-job":      300 * time.Second,
		"QueueUnit/ns/by-template": 120 * time.Second,
		"QueueUnit/ns/unbound":     0,
		"QueueUnit/ns/zero":        time.Second, // a pod's least, as the webhook writes it
	}
	if !maps.Equal(bounds, want) {
		t.Errorf("runtime bounds of work without pods %v, want %v", bounds, want)
	}
}

// A runtime told ahead (ForecastSettings.KnownRuntime, as queuesim tells its pods') replaces the
// runtime learned, or the default, at the median and the 90th percentile alike: a running pod ends
// at it, within its bound; pending work runs its longest pod's. A pod it says nothing of is
// estimated as before.
func TestKnownRuntimesReplaceTheEstimates(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const runtimeKey = "example.com/runtime"
	known := func(pod *v1.Pod) (time.Duration, bool) {
		d, err := time.ParseDuration(pod.Annotations[runtimeKey])
		return d, err == nil
	}
	c := &Model{acct: syncedAccounting(t, ctx, fake.NewSimpleClientset(util.MakeQueue("q").Obj())),
		forecast: forecaster{settings: ForecastSettings{KnownRuntime: known}}}
	now := time.Now().Truncate(time.Second)
	started := now.Add(-time.Minute)
	pod := func(runtime string, deadline *int64) *v1.Pod {
		p := util.MakePod("ns", "p").UID("p").Label(schedulingv1beta1.QueueLabel, "q").Obj()
		if runtime != "" {
			p.Annotations = map[string]string{runtimeKey: runtime}
		}
		p.Spec.SchedulerName, p.Spec.ActiveDeadlineSeconds = schedulingv1beta1.SchedulerName, deadline
		p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](0)
		return p
	}
	running := func(p *v1.Pod) *v1.Pod {
		p.Spec.NodeName, p.Status.Phase, p.Status.StartTime = "n", v1.PodRunning, ptr.To(metav1.NewTime(started))
		return p
	}
	for _, tt := range []struct {
		name string
		pod  *v1.Pod
		want forecast.Ends
	}{
		{"told 5m", running(pod("5m", nil)), forecast.Ends{P50: started.Add(5 * time.Minute), P90: started.Add(5 * time.Minute)}},
		{"told 5m, bounded to 2m", running(pod("5m", ptr.To[int64](120))), forecast.Ends{P50: started.Add(2 * time.Minute), P90: started.Add(2 * time.Minute)}},
		{"told nothing", running(pod("", nil)), forecast.Ends{P50: started.Add(defaultRuntime.P50), P90: started.Add(defaultRuntime.P90)}},
	} {
		if e := c.endsOf(tt.pod, now); !e.P50.Equal(tt.want.P50) || !e.P90.Equal(tt.want.P90) {
			t.Errorf("a running pod %s: ends %v / %v, want %v / %v", tt.name, e.P50, e.P90, tt.want.P50, tt.want.P90)
		}
	}
	// Of one shape, told 3m and 7m: the longer, whichever comes first.
	if r := c.workRuntime("q", "PyTorchJob", []*v1.Pod{pod("3m", nil), pod("7m", nil)}, now); r != (forecast.Runtime{P50: 7 * time.Minute, P90: 7 * time.Minute, Basis: forecast.Basis{Source: forecast.SourceKnown}}) {
		t.Errorf("pending work of pods told 3m and 7m: runtime %+v, want 7m", r)
	}
	if r := c.workRuntime("q", "PyTorchJob", []*v1.Pod{pod("", nil)}, now); r != defaultRuntime {
		t.Errorf("pending work told nothing: runtime %+v, want the default", r)
	}
}

// storeConsumers reads the consumers from one informer's store.
type storeConsumers struct{ store cache.Store }

func (c storeConsumers) Cached(namespace string, ref v1.ObjectReference) *unstructured.Unstructured {
	obj, ok, err := c.store.GetByKey(namespace + "/" + ref.Name)
	if err != nil || !ok {
		return nil
	}
	u, _ := obj.(*unstructured.Unstructured)
	return u
}
