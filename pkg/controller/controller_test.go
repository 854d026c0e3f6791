package controller

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/utils/clock"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting/accountingtest"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned/fake"
	"github.com/queue-scheduler/queue-scheduler/pkg/metrics"
	"github.com/queue-scheduler/queue-scheduler/pkg/readmodel"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// The controller writes a queue's status once, and not again while nothing changed.
func TestStatusWrittenOnlyWhenChanged(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	queues := fake.NewSimpleClientset(util.MakeQueue("q").State(schedulingv1beta1.QueueStateClosed).Obj())
	kube := kubefake.NewClientset()
	acct := startAccounting(t, ctx, queues, kube)
	c, err := New(ctx, kube, dynamicfake.NewSimpleDynamicClient(runtime.NewScheme()), nil, acct, nil, StatusPacing{Interval: time.Second, PerSecond: 25}, readmodel.ForecastSettings{})
	if err != nil {
		t.Fatal(err)
	}

	if err := c.syncQueue(ctx, "q"); err != nil {
		t.Fatal(err)
	}
	if got := statusWrites(queues); got != 1 {
		t.Fatalf("status writes after the first sync: got %d, want 1", got)
	}
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		q, ok := acct.Store.Queue("q")
		return ok && q.Status.State == schedulingv1beta1.QueueStateClosed, nil
	})
	if err != nil {
		t.Fatal("the cache never saw the written status")
	}
	for range 3 {
		if err := c.syncQueue(ctx, "q"); err != nil {
			t.Fatal(err)
		}
	}
	if got := statusWrites(queues); got != 1 {
		t.Errorf("status writes after syncs with nothing changed: got %d, want still 1", got)
	}
	q, err := queues.SchedulingV1beta1().Queues().Get(ctx, "q", metav1.GetOptions{})
	if err != nil || q.Status.State != schedulingv1beta1.QueueStateClosed {
		t.Errorf("stored status: %+v, %v; want Closed", q.Status, err)
	}
}

// startAccounting starts the accounting on the clients' informers, which run until ctx ends, and
// waits until it heard of every object they started with.
func startAccounting(t testing.TB, ctx context.Context, queues *fake.Clientset, kube *kubefake.Clientset) *accounting.Accounting {
	t.Helper()
	acct, _ := accountingtest.StartOn(ctx, t, queues, kube, accounting.Config{})
	return acct
}

func statusWrites(client *fake.Clientset) int {
	n := 0
	for _, a := range client.Actions() {
		if a.GetVerb() == "update" && a.GetSubresource() == "status" {
			n++
		}
	}
	return n
}

// A controller built but stopped leaves no goroutine behind once its context ends: a scheduler that
// shuts down, or a test that starts one per case, does not leak its event broadcaster.
func TestControllerLeavesNoGoroutineWhenStopped(t *testing.T) {
	before := goleak.IgnoreCurrent()
	ctx, cancel := context.WithCancel(context.Background())
	queues := fake.NewSimpleClientset()
	kube := kubefake.NewClientset()
	factory := informers.NewSharedInformerFactory(kube, 0)
	acct, err := accounting.Start(ctx, queues, factory, accounting.Config{})
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	if _, err := New(ctx, kube, dynamicfake.NewSimpleDynamicClient(runtime.NewScheme()), nil, acct, nil, StatusPacing{Interval: time.Second, PerSecond: 25}, readmodel.ForecastSettings{}); err != nil {
		t.Fatal(err)
	}
	cancel()
	factory.Shutdown()
	goleak.VerifyNone(t, before)
}

// A change of a queue's work (its PodGroups and QueueUnits) or usage syncs an open queue's status at
// the pace of its usage (the first change at once, the ones within the interval folded into one
// later sync). A closed queue's work changes, or its last pod leaving, sync it at once (it may be
// Closed now), and so does a change of a deleted queue's work (what it left is cleaned up). A change
// of work offers the room it may have freed at once, in an admission pass over the queue's Pending
// groups.
func TestWorkChangesSyncAtTheirPace(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	queues := fake.NewSimpleClientset(util.MakeQueue("open").Obj(), util.MakeQueue("closed").State(schedulingv1beta1.QueueStateClosed).Obj())
	var groups []*schedulingv1beta1.PodGroup
	for i := range 4 {
		for _, queue := range []string{"open", "closed"} {
			pg := util.MakePodGroup("ns", fmt.Sprint(queue, i)).Queue(queue).MinResources(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()
			if _, err := queues.SchedulingV1beta1().PodGroups("ns").Create(ctx, pg, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			groups = append(groups, pg)
		}
	}
	kube := kubefake.NewClientset()
	acct := startAccounting(t, ctx, queues, kube)
	err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		_, open := acct.Store.Queue("open")
		_, closed := acct.Store.Queue("closed")
		return open && closed && len(acct.Store.PodGroupsOf("open")) == 4 && len(acct.Store.PodGroupsOf("closed")) == 4, nil
	})
	if err != nil {
		t.Fatal("the cache never saw the queues and PodGroups")
	}
	// The handlers alone, without informers of their own that would add keys meanwhile.
	c := &Controller{acct: acct, clock: clock.RealClock{}, usageWrites: newThrottle(StatusPacing{Interval: time.Minute, PerSecond: 25}), wq: newWorkqueues(clock.RealClock{})}
	defer c.wq.shutDown()

	for _, pg := range groups[:6] {
		c.onPodGroup(pg)
	}
	if got := drain(c.wq.queues); !slices.Equal(got, []string{"closed", "open"}) {
		t.Errorf("queues synced at once after three changes each: %v, want closed and open (its first change)", got)
	}
	if got := drain(c.wq.admissions); !slices.Equal(got, []string{"open"}) {
		t.Errorf("admission passes after the first changes: %v, want open's (the queues synced at once offer their room as they sync)", got)
	}
	c.onPodGroup(groups[6])
	c.onPodGroup(groups[7])
	gone := util.MakePodGroup("ns", "orphan").Queue("gone").Obj()
	c.onPodGroup(gone)
	c.onPodGroup(gone)
	if got := drain(c.wq.queues); !slices.Equal(got, []string{"closed", "gone"}) {
		t.Errorf("queues synced at once after more changes: %v, want closed and gone (cleaned up after), not open (it waits out its interval)", got)
	}
	if got := drain(c.wq.admissions); !slices.Equal(got, []string{"open"}) {
		t.Errorf("admission passes at once: %v, want open's (its Pending groups may fit now)", got)
	}
	c.onQueueUnit(util.MakeQueueUnit("ns", "u", "open", "job").Obj())
	c.onQueueUnit(util.MakeQueueUnit("ns", "v", "closed", "job").Obj())
	c.enqueueQueueForUsage("open")
	c.enqueueQueueForUsage("closed") // no pod left: it may be Closed now
	if got := drain(c.wq.queues); !slices.Equal(got, []string{"closed"}) {
		t.Errorf("queues synced at once after unit and usage changes: %v, want closed only", got)
	}

	// While pods are left, a closed queue's usage changes only count them down: paced.
	pod := util.MakePod("ns", "p").SchedulerName(schedulingv1beta1.SchedulerName).Label(schedulingv1beta1.QueueLabel, "closed").
		Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()
	pod.Spec.NodeName = "node"
	if _, err := kube.CoreV1().Pods("ns").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return acct.Pods.PodCount("closed") == 1, nil
	})
	if err != nil {
		t.Fatal("the accounting never counted the closed queue's pod")
	}
	c.enqueueQueueForUsage("closed") // the first change after a quiet interval goes at once
	drain(c.wq.queues)
	c.enqueueQueueForUsage("closed")
	if got := drain(c.wq.queues); len(got) != 0 {
		t.Errorf("queues synced at once after a usage change of a closed queue that holds a pod: %v, want none", got)
	}
}

// Work that gives back room it reserved runs an admission pass over the Pending groups of every
// queue of its queue's tree, whose capabilities above counted the reservation: a sibling's group
// that waited at the parent's capability is judged again at once, not at its own queue's next sync.
// Queues of another tree, and queues with nothing Pending, are left alone; units left Enqueued are
// offered the room in a dequeue pass.
func TestReleasedWorkOffersItsRoomToTheTree(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cpu := map[v1.ResourceName]string{v1.ResourceCPU: "1"}
	queues := fake.NewSimpleClientset(util.MakeQueue("root").Obj(), util.MakeQueue("org").Obj(), util.MakeQueue("a").Parent("org").Obj(),
		util.MakeQueue("b").Parent("org").Obj(), util.MakeQueue("idle").Parent("org").Obj(), util.MakeQueue("other").Obj(),
		util.MakePodGroup("ns", "in-b").Queue("b").MinResources(cpu).Obj(), util.MakePodGroup("ns", "in-other").Queue("other").MinResources(cpu).Obj())
	acct := startAccounting(t, ctx, queues, kubefake.NewClientset())
	c := &Controller{acct: acct, clock: clock.RealClock{}, wq: newWorkqueues(clock.RealClock{})}
	defer c.wq.shutDown()
	acct.Events.WorkReleased.Subscribe(c.onWorkReleased) // as addEventHandlers registers it
	gone := util.MakePodGroup("ns", "gone").Queue("a").Obj()
	if _, err := queues.SchedulingV1beta1().PodGroups("ns").Create(ctx, gone, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return len(acct.Store.PodGroupsOf("a")) == 1, nil
	}); err != nil {
		t.Fatal("the cache never saw the PodGroup")
	}
	drain(c.wq.admissions)
	c.unitsWaiting.Store(true) // the last dequeue pass left units Enqueued
	if err := queues.SchedulingV1beta1().PodGroups("ns").Delete(ctx, "gone", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return c.wq.admissions.Len() > 0, nil
	}); err != nil {
		t.Fatal("no admission pass after the PodGroup was deleted")
	}
	if got := drain(c.wq.admissions); !slices.Equal(got, []string{"b"}) {
		t.Errorf("admission passes after work of queue a gave back its room: %v, want b's (its sibling with a Pending group)", got)
	}
	if c.wq.units.Len() == 0 {
		t.Error("no dequeue pass for the units left Enqueued")
	}
}

// drain takes every key ready on the workqueue, sorted.
func drain(q workqueue.TypedRateLimitingInterface[string]) []string {
	var keys []string
	for q.Len() > 0 {
		key, _ := q.Get()
		keys = append(keys, key)
		q.Done(key)
	}
	slices.Sort(keys)
	return keys
}

// An admission is counted when a group leaves Pending, to Inqueue or, for a group that takes no
// room and ran before its Inqueue was written, straight to Running; once.
func TestAdmissionsCountedOnLeavingPending(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	acct := startAccounting(t, ctx, fake.NewSimpleClientset(util.MakeQueue("counted").Obj()), kubefake.NewClientset())
	c := &Controller{acct: acct, clock: clock.RealClock{}}
	admissions := func() float64 {
		v, err := testutil.GetCounterMetricValue(metrics.PodGroupAdmissions.WithLabelValues("counted"))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	group := func(phase schedulingv1beta1.PodGroupPhase) *schedulingv1beta1.PodGroup {
		pg := util.MakePodGroup("ns", "g").Queue("counted").Obj()
		pg.Status.Phase = phase
		return pg
	}
	before := admissions()
	c.countPhaseChange(group(""), schedulingv1beta1.PodGroupRunning)
	c.countPhaseChange(group(schedulingv1beta1.PodGroupPending), schedulingv1beta1.PodGroupInqueue)
	c.countPhaseChange(group(schedulingv1beta1.PodGroupInqueue), schedulingv1beta1.PodGroupRunning)
	c.countPhaseChange(group(schedulingv1beta1.PodGroupPending), schedulingv1beta1.PodGroupPending)
	if got := admissions() - before; got != 2 {
		t.Errorf("%v admissions counted, want 2: Pending to Running and Pending to Inqueue", got)
	}
}
