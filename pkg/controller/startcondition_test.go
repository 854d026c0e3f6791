package controller

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
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
		c.setStartCondition(&conditions, "PodGroup/ns/g", step.start, 1)
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
