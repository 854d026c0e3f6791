package controller

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned/fake"
	"github.com/queue-scheduler/queue-scheduler/pkg/readmodel"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// A start is written when it first comes, when it moves by more than a tenth of the wait (a minute
// at least), when it turns none, and the condition goes once the work no longer waits; smaller moves
// leave the condition as it is.
func TestStartConditionMovesAtABoundedRate(t *testing.T) {
	c := &Controller{}
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	start := func(inFromNow time.Duration) *visibilityv1beta1.ExpectedStart {
		s := &visibilityv1beta1.ExpectedStart{ForecastTime: metav1.NewTime(now)}
		if inFromNow >= 0 {
			s.P50, s.P90 = ptr.To(metav1.NewTime(now.Add(inFromNow))), ptr.To(metav1.NewTime(now.Add(2*inFromNow)))
		}
		return s
	}
	var conditions []metav1.Condition
	message := func() string {
		if got := meta.FindStatusCondition(conditions, schedulingv1beta1.PodGroupExpectedStart); got != nil {
			return got.Reason + ": " + got.Message
		}
		return ""
	}
	for _, step := range []struct {
		what    string
		start   *visibilityv1beta1.ExpectedStart
		written bool
	}{
		{"first forecast, in an hour", start(time.Hour), true},
		{"5 minutes later: within a tenth of the wait", start(time.Hour + 5*time.Minute), false},
		{"15 minutes later than shown", start(time.Hour + 15*time.Minute), true},
		{"30 s earlier: within a minute", start(time.Hour + 14*time.Minute + 30*time.Second), false},
		{"no start within the horizon", start(-1), true},
		{"still none", start(-1), false},
		{"no longer waits", nil, true},
	} {
		before := message()
		next, forget := c.applyStart(&conditions, "PodGroup/ns/g", step.start, 1)
		c.shown.set("PodGroup/ns/g", next, !forget) // as after the write
		if got := message() != before; got != step.written {
			t.Errorf("%s: condition %q (was %q); written %v, want %v", step.what, message(), before, got, step.written)
		}
	}
	if len(conditions) != 0 {
		t.Errorf("conditions %+v once the work no longer waits; want none", conditions)
	}
}

// The message says both starts and when the forecast was made.
func TestStartConditionSaysBothStarts(t *testing.T) {
	at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	s := &visibilityv1beta1.ExpectedStart{ForecastTime: metav1.NewTime(at), P50: ptr.To(metav1.NewTime(at.Add(time.Hour)))}
	c := startCondition(s, 3)
	want := "expected to start at 2026-11-27T13:00:00Z; at the 90th percentile of the runtimes, not within 7d (forecast at 2026-11-27T12:00:00Z)"
	if c.Status != metav1.ConditionTrue || c.Reason != ReasonForecast || c.Message != want || c.ObservedGeneration != 3 {
		t.Errorf("condition %+v; want True, Forecast, %q", c, want)
	}
}

// A refresh writes at most startWritesPerRefresh conditions; the next writes the rest; one after
// that writes nothing, as nothing moved. A new term writes every condition once more.
func TestRefreshWritesAtABoundedRate(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var objects []runtime.Object
	// Groups that wait to be admitted to a queue too small for them: none is expected to start.
	objects = append(objects, util.MakeQueue("small").Capability(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj())
	const groups = startWritesPerRefresh + 10
	for i := range groups {
		pg := util.MakePodGroup("ns", fmt.Sprintf("g%03d", i)).MinMember(1).Queue("small").Obj()
		pg.Spec.MinResources = v1.ResourceList{v1.ResourceCPU: resource.MustParse("2")}
		pg.Status.Phase = schedulingv1beta1.PodGroupPending
		objects = append(objects, pg)
	}
	queues := fake.NewSimpleClientset(objects...)
	acct := startAccounting(t, ctx, queues, kubefake.NewClientset(util.MakeNode("n", "8", "16Gi")))
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		pgs, _ := acct.Store.PodGroups().List(labels.Everything())
		return acct.Synced() && len(pgs) == groups, nil
	}); err != nil {
		t.Fatal("the accounting never synced")
	}
	c := &Controller{acct: acct, view: readmodel.New(acct, readmodel.ForecastSettings{}, nil)}
	writes := func() int {
		n := 0
		for _, a := range queues.Actions() {
			if a.GetVerb() == "update" && a.GetSubresource() == "status" {
				n++
			}
		}
		return n
	}
	waitWritesSeen := func(want int) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
			pgs, _ := acct.Store.PodGroups().List(labels.Everything())
			seen := 0
			for _, pg := range pgs {
				if meta.FindStatusCondition(pg.Status.Conditions, schedulingv1beta1.PodGroupExpectedStart) != nil {
					seen++
				}
			}
			return seen == want, nil
		}); err != nil {
			t.Fatalf("the cache never saw %d conditions", want)
		}
	}
	if got := c.refreshPass(ctx); got != startWritesPerRefresh || writes() != startWritesPerRefresh {
		t.Fatalf("first pass wrote %d (%d updates), want %d", got, writes(), startWritesPerRefresh)
	}
	waitWritesSeen(startWritesPerRefresh)
	if got := c.refreshPass(ctx); got != 10 {
		t.Fatalf("second pass wrote %d, want the 10 left", got)
	}
	waitWritesSeen(groups)
	if got := c.refreshPass(ctx); got != 0 {
		t.Fatalf("a pass with nothing moved wrote %d", got)
	}
	c.shown.reset()
	if got := c.refreshPass(ctx); got != startWritesPerRefresh {
		t.Fatalf("a new term's first pass wrote %d, want %d", got, startWritesPerRefresh)
	}
}

// A pass with no PodGroup or QueueUnit waiting makes no forecast (pending pods of neither have no
// condition to show it), and still takes out the condition of a group that started.
func TestRefreshForecastsOnlyForWaitingWork(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := util.MakePodGroup("ns", "started").MinMember(1).Queue("q").Obj()
	started.Status.Phase = schedulingv1beta1.PodGroupRunning
	started.Status.Conditions = []metav1.Condition{{Type: schedulingv1beta1.PodGroupExpectedStart, Status: metav1.ConditionTrue,
		Reason: ReasonForecast, LastTransitionTime: metav1.Now()}}
	waiting := util.MakePodGroup("ns", "waiting").MinMember(1).Queue("q").Obj()
	waiting.Status.Phase = schedulingv1beta1.PodGroupPending
	queues := fake.NewSimpleClientset(util.MakeQueue("q").Obj(), started)
	acct := startAccounting(t, ctx, queues, kubefake.NewClientset(util.MakeNode("n", "8", "16Gi"), util.MakePod("ns", "p").Label(schedulingv1beta1.QueueLabel, "q").Obj()))
	waitPodGroups := func(want int) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
			pgs, _ := acct.Store.PodGroups().List(labels.Everything())
			return acct.Synced() && len(pgs) == want, nil
		}); err != nil {
			t.Fatalf("the accounting never saw %d PodGroups", want)
		}
	}
	waitPodGroups(1)
	c := &Controller{acct: acct, view: readmodel.New(acct, readmodel.ForecastSettings{}, nil)}
	if got := c.refreshPass(ctx); got != 1 || !c.view.LastForecast().At().IsZero() {
		t.Fatalf("a pass with nothing waiting wrote %d (want the started group's condition taken out), forecast %t",
			got, !c.view.LastForecast().At().IsZero())
	}
	if _, err := queues.SchedulingV1beta1().PodGroups("ns").Create(ctx, waiting, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPodGroups(2)
	if c.refreshPass(ctx); c.view.LastForecast().At().IsZero() {
		t.Error("a pass with a group waiting made no forecast")
	}
}
