package readmodel

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/forecast"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned/fake"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// Each runtime, and each running pod's end, says what it was read from: the default while nothing
// like it finished, the runs learned (how many, of which work), a run past them all (outlived), the
// pod's runtime bound or deletion where that ends it first, or a runtime told ahead.
func TestRuntimeBasis(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	acct := syncedAccounting(t, ctx, fake.NewSimpleClientset(util.MakeQueue("q").Obj(), util.MakeQueue("other").Obj()))
	learned, fresh := &Model{acct: acct}, &Model{acct: acct}
	known := &Model{acct: acct, forecast: forecaster{settings: ForecastSettings{KnownRuntime: func(*v1.Pod) (time.Duration, bool) {
		return 5 * time.Minute, true
	}}}}
	now := time.Now().Truncate(time.Second)
	pod := func(queue, kind string, bound int64) *v1.Pod {
		p := util.MakePod("ns", "p").UID("p").Label(schedulingv1beta1.QueueLabel, queue).Obj()
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "example.com/v1", Kind: kind, Name: "j", Controller: ptr.To(true)}}
		p.Spec.SchedulerName, p.Spec.TerminationGracePeriodSeconds = schedulingv1beta1.SchedulerName, ptr.To[int64](0)
		if bound > 0 {
			p.Spec.ActiveDeadlineSeconds = ptr.To(bound)
		}
		return p
	}
	running := func(p *v1.Pod, since time.Duration) *v1.Pod {
		p.Spec.NodeName, p.Status.Phase, p.Status.StartTime = "n", v1.PodRunning, ptr.To(metav1.NewTime(now.Add(-since)))
		return p
	}
	for i := range 4 {
		p := pod("q", "Job", 0)
		p.Status.Phase, p.Status.StartTime = v1.PodSucceeded, ptr.To(metav1.NewTime(now.Add(-time.Duration(10+i)*time.Minute)))
		p.Status.ContainerStatuses = []v1.ContainerStatus{{State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
			FinishedAt: metav1.NewTime(now.Add(-time.Duration(i) * time.Minute))}}}}
		learned.LearnRuntime(p)
	}
	deleted := running(pod("q", "Job", 0), time.Minute)
	deleted.DeletionTimestamp = ptr.To(metav1.NewTime(now.Add(30 * time.Second)))
	fromRuns := func(runs int, scope forecast.Scope) forecast.Basis {
		return forecast.Basis{Source: forecast.SourceLearned, Runs: runs, Scope: scope}
	}
	work := func(c *Model, p *v1.Pod) func() forecast.Basis {
		return func() forecast.Basis {
			return c.workRuntime(p.Labels[schedulingv1beta1.QueueLabel], p.OwnerReferences[0].Kind, []*v1.Pod{p}, now).Basis
		}
	}
	end := func(c *Model, p *v1.Pod) func() forecast.Basis {
		return func() forecast.Basis { return c.endsOf(p, now).Basis }
	}
	for _, tt := range []struct {
		name  string
		basis func() forecast.Basis
		want  forecast.Basis
	}{
		{name: "nothing finished", basis: work(fresh, pod("q", "Job", 0)), want: forecast.Basis{Source: forecast.SourceDefault}},
		{name: "nothing finished, running past the default", basis: end(fresh, running(pod("q", "Job", 0), 2*time.Hour)),
			want: forecast.Basis{Source: forecast.SourceOutlived}},
		{name: "its queue's Jobs", basis: work(learned, pod("q", "Job", 0)), want: fromRuns(4, forecast.ScopeKind)},
		{name: "its queue's other work", basis: work(learned, pod("q", "PyTorchJob", 0)), want: fromRuns(4, forecast.ScopeQueue)},
		{name: "all the work, nothing like it", basis: work(learned, pod("other", "PyTorchJob", 0)), want: fromRuns(4, forecast.ScopeAll)},
		{name: "running past every run learned", basis: end(learned, running(pod("q", "Job", 0), time.Hour)),
			want: forecast.Basis{Source: forecast.SourceOutlived, Runs: 4, Scope: forecast.ScopeKind}},
		{name: "running, within the runs learned", basis: end(learned, running(pod("q", "Job", 0), time.Minute)), want: fromRuns(4, forecast.ScopeKind)},
		{name: "bounded before the runtime learned", basis: work(learned, pod("q", "Job", 300)), want: forecast.Basis{Source: forecast.SourceBounded}},
		{name: "bounded after the runtime learned", basis: work(learned, pod("q", "Job", 3600)), want: fromRuns(4, forecast.ScopeKind)},
		{name: "bounded, nothing like it: the default, not all the work", basis: work(learned, pod("other", "PyTorchJob", 86400)),
			want: forecast.Basis{Source: forecast.SourceDefault}},
		{name: "running, ended by its bound", basis: end(learned, running(pod("q", "Job", 300), time.Minute)), want: forecast.Basis{Source: forecast.SourceBounded}},
		{name: "running, being deleted", basis: end(learned, deleted), want: forecast.Basis{Source: forecast.SourceBounded}},
		{name: "told ahead", basis: work(known, pod("q", "Job", 0)), want: forecast.Basis{Source: forecast.SourceKnown}},
		{name: "told ahead, running", basis: end(known, running(pod("q", "Job", 0), time.Minute)), want: forecast.Basis{Source: forecast.SourceKnown}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.basis()); diff != "" {
				t.Errorf("basis (-want,+got):\n%s", diff)
			}
		})
	}
}

// The live view names the forecast's basis in the API's terms, and none where there is none.
func TestRuntimeBasisInTheLiveView(t *testing.T) {
	at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	starts := ExpectedStarts{at: at, byKey: map[string]forecast.Start{
		"now":     {P50: at, P90: at},
		"default": {P50: at.Add(time.Hour), P90: at.Add(4 * time.Hour), Basis: forecast.Basis{Source: forecast.SourceDefault}},
		"learned": {P50: at.Add(time.Hour), P90: at.Add(2 * time.Hour), Basis: forecast.Basis{Source: forecast.SourceLearned, Runs: 7, Scope: forecast.ScopeKindInAnyQueue}},
		"bounded": {P50: at.Add(time.Hour), P90: at.Add(time.Hour), Basis: forecast.Basis{Source: forecast.SourceBounded}},
	}}
	for _, tt := range []struct {
		name string
		key  string
		want *visibilityv1beta1.RuntimeBasis
	}{
		{name: "starting now", key: "now"},
		{name: "the default", key: "default", want: &visibilityv1beta1.RuntimeBasis{Source: visibilityv1beta1.RuntimeDefault}},
		{name: "learned", key: "learned", want: &visibilityv1beta1.RuntimeBasis{Source: visibilityv1beta1.RuntimeLearned, Runs: 7,
			LearnedFrom: visibilityv1beta1.ScopeKindInAnyQueue}},
		{name: "bounded", key: "bounded", want: &visibilityv1beta1.RuntimeBasis{Source: visibilityv1beta1.RuntimeBounded}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, starts.Of(tt.key).RuntimeBasis); diff != "" {
				t.Errorf("runtime basis (-want,+got):\n%s", diff)
			}
		})
	}
}
