package holdreport

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
)

type fixture struct {
	reporter *Reporter
	client   *fake.Clientset
	recorder *events.FakeRecorder
}

func newFixture(t *testing.T, pods ...*v1.Pod) *fixture {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	objs := make([]any, 0, len(pods))
	client := fake.NewClientset()
	for _, p := range pods {
		if _, err := client.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, p)
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	lister := factory.Core().V1().Pods().Lister()
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	client.ClearActions()
	recorder := events.NewFakeRecorder(len(objs) + 10)
	reporter := New(client, lister, recorder, clock.RealClock{})
	reporter.delay = 0
	return &fixture{reporter: reporter, client: client, recorder: recorder}
}

// drain processes every queued report.
func (f *fixture) drain(t *testing.T) {
	t.Helper()
	for f.reporter.queue.Len() > 0 {
		if !f.reporter.processNext(context.Background()) {
			t.Fatal("reporter shut down")
		}
	}
}

// writes counts the status writes sent to the API server.
func (f *fixture) writes() int {
	n := 0
	for _, a := range f.client.Actions() {
		if a.GetVerb() == "update" && a.GetSubresource() == "status" {
			n++
		}
	}
	return n
}

func (f *fixture) events() []string {
	var out []string
	for {
		select {
		case e := <-f.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func pendingPod(name string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)}}
}

func TestReportsOncePerChangeOfReason(t *testing.T) {
	pod := pendingPod("p")
	f := newFixture(t, pod)

	for range 3 {
		f.reporter.Held(pod, Why{Message: "queue \"a\" is Suspended"})
		f.drain(t)
	}
	if got := f.writes(); got != 1 {
		t.Errorf("writes after the same reason three times: got %d, want 1", got)
	}
	f.reporter.Held(pod, Why{Message: "queue \"a\" does not exist"})
	f.drain(t)
	f.reporter.Released(pod)
	f.reporter.Held(pod, Why{Message: "queue \"a\" does not exist"})
	f.drain(t)
	if got := f.writes(); got != 3 {
		t.Errorf("writes after a new reason and a release: got %d, want 3", got)
	}
	want := []string{
		`Warning FailedScheduling queue "a" is Suspended`,
		`Warning FailedScheduling queue "a" does not exist`,
		`Warning FailedScheduling queue "a" does not exist`,
	}
	if diff := cmp.Diff(want, f.events()); diff != "" {
		t.Errorf("events (-want,+got):\n%s", diff)
	}
}

func TestReportSetsPodScheduledFalse(t *testing.T) {
	pod := pendingPod("p")
	f := newFixture(t, pod)
	f.reporter.Held(pod, Why{Message: "queue \"a\" is Suspended: no new resources are allocated"})
	f.drain(t)

	got, err := f.client.CoreV1().Pods("ns").Get(context.Background(), "p", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Status.Conditions) != 1 {
		t.Fatalf("conditions: got %+v, want one", got.Status.Conditions)
	}
	c := got.Status.Conditions[0]
	want := v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionFalse, Reason: v1.PodReasonUnschedulable,
		Message: "queue \"a\" is Suspended: no new resources are allocated"}
	c.LastTransitionTime, c.LastProbeTime = metav1.Time{}, metav1.Time{}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("condition (-want,+got):\n%s", diff)
	}
}

func TestNoReportForBoundOrReplacedPods(t *testing.T) {
	bound := pendingPod("bound")
	bound.Spec.NodeName = "node-1"
	replaced := pendingPod("replaced")
	f := newFixture(t, bound, replaced)

	f.reporter.Held(bound, Why{Message: "held"})
	stale := replaced.DeepCopy()
	stale.UID = "an-older-pod"
	f.reporter.Held(stale, Why{Message: "held"})
	f.reporter.Held(pendingPod("gone"), Why{Message: "held"})
	f.drain(t)

	if got := f.writes(); got != 0 {
		t.Errorf("writes: got %d, want 0", got)
	}
	if got := f.events(); len(got) != 0 {
		t.Errorf("events: got %v, want none", got)
	}
}

func TestLatestReasonWins(t *testing.T) {
	pod := pendingPod("p")
	f := newFixture(t, pod)
	f.reporter.Held(pod, Why{Message: "first"})
	f.reporter.Held(pod, Why{Message: "second"})
	f.drain(t)
	if diff := cmp.Diff([]string{"Warning FailedScheduling second"}, f.events()); diff != "" {
		t.Errorf("events (-want,+got):\n%s", diff)
	}
}

// countingLimiter admits everything and counts what it was asked to admit.
type countingLimiter struct{ waits int }

func (l *countingLimiter) TryAccept() bool            { return true }
func (l *countingLimiter) Accept()                    {}
func (l *countingLimiter) Stop()                      {}
func (l *countingLimiter) QPS() float32               { return 0 }
func (l *countingLimiter) Wait(context.Context) error { l.waits++; return nil }

// Every write waits for the shared rate limiter, so many held pods are reported at a bounded rate.
func TestEveryReportWaitsForTheRateLimiter(t *testing.T) {
	pods := make([]*v1.Pod, 0, 50)
	for i := range 50 {
		pods = append(pods, pendingPod(fmt.Sprintf("p%d", i)))
	}
	f := newFixture(t, pods...)
	limiter := &countingLimiter{}
	f.reporter.limiter = limiter
	for _, p := range pods {
		f.reporter.Held(p, Why{Message: "held"})
	}
	f.drain(t)
	if f.writes() != 50 || limiter.waits != 50 {
		t.Errorf("writes %d, limiter waits %d; want 50 and 50", f.writes(), limiter.waits)
	}
}

// A hold that no node can help carries its own reason, so that autoscalers leave the pod alone; the
// same message with another reason is a change, and is written again.
func TestReportCarriesTheReason(t *testing.T) {
	pod := pendingPod("p")
	f := newFixture(t, pod)
	reason := func() string {
		got, err := f.client.CoreV1().Pods("ns").Get(context.Background(), "p", metav1.GetOptions{})
		if err != nil || len(got.Status.Conditions) != 1 {
			t.Fatalf("pod: %v, conditions %+v", err, got.Status.Conditions)
		}
		return got.Status.Conditions[0].Reason
	}
	f.reporter.Held(pod, Why{Reason: QueueSuspended, Message: "queue \"a\" is Suspended"})
	f.drain(t)
	if got := reason(); got != QueueSuspended {
		t.Errorf("reason: %q, want %s", got, QueueSuspended)
	}
	f.reporter.Held(pod, Why{Message: "queue \"a\" is Suspended"})
	f.drain(t)
	if got := f.writes(); got != 2 {
		t.Errorf("writes: got %d, want 2 (the reason changed)", got)
	}
	if got := reason(); got != v1.PodReasonUnschedulable {
		t.Errorf("reason after a hold without one: %q, want %s", got, v1.PodReasonUnschedulable)
	}
}

// A pod whose wait ends within the report delay gets no report; one that waits longer gets it.
func TestShortWaitsAreNotReported(t *testing.T) {
	short, long := pendingPod("short"), pendingPod("long")
	f := newFixture(t, short, long)
	f.reporter.delay = 20 * time.Millisecond
	f.reporter.Held(short, Why{Message: "waiting for the fair shares"})
	f.reporter.Held(long, Why{Message: "waiting for the fair shares"})
	f.reporter.Released(short)
	for processed := 0; processed < 2; processed++ {
		if !f.reporter.processNext(context.Background()) { // blocks until a delayed key is due
			t.Fatal("reporter shut down")
		}
	}
	if got := f.writes(); got != 1 {
		t.Errorf("writes: got %d, want 1 (only the pod that kept waiting)", got)
	}
	if diff := cmp.Diff([]string{"Warning FailedScheduling waiting for the fair shares"}, f.events()); diff != "" {
		t.Errorf("events (-want,+got):\n%s", diff)
	}
}
