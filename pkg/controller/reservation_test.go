package controller

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/timeline"
)

func TestReservedCondition(t *testing.T) {
	start := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	held := &timeline.Reservation{Gang: "ns/g", Start: start, End: start.Add(time.Hour)}
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		held.Nodes = append(held.Nodes, timeline.Share{Node: n})
	}
	pg := &schedulingv1beta1.PodGroup{}
	reserved := func(status metav1.ConditionStatus, reason string) []metav1.Condition {
		return []metav1.Condition{{Type: schedulingv1beta1.PodGroupReserved, Status: status, Reason: reason}}
	}
	scheduled := metav1.Condition{Type: schedulingv1beta1.PodGroupScheduled, Status: metav1.ConditionTrue}
	tests := []struct {
		name   string
		before []metav1.Condition
		r      reservation
		want   string // "status/reason", or "" for no condition
		words  []string
	}{
		{name: "planned", r: reservation{r: held}, want: "True/StartPlanned",
			words: []string{"7 node(s) (a, b, c, d, e and 2 more)", "from 2026-11-26T12:00:00Z", "for 1h0m0s"}},
		{name: "due", r: reservation{r: held, due: true}, want: "True/StartPlanned", words: []string{"free now"}},
		{name: "never held one", want: ""},
		{name: "no start in the window", r: reservation{unplaced: true}, want: "False/NoStartWithinWindow"},
		{name: "let go", before: reserved(metav1.ConditionTrue, ReasonStartPlanned), want: "False/Released"},
		{name: "started", before: append(reserved(metav1.ConditionTrue, ReasonStartPlanned), scheduled), want: "False/Started"},
		{name: "started after it was let go", before: append(reserved(metav1.ConditionFalse, ReasonReleased), scheduled), want: "False/Started"},
		{name: "lapsed", before: reserved(metav1.ConditionTrue, ReasonStartPlanned), r: reservation{lapsed: &timeline.Lapse{Gang: "ns/g", Since: start, Until: start.Add(4 * time.Minute)}},
			want: "False/Lapsed", words: []string{"free from 2026-11-26T12:00:00Z", "planned again from 2026-11-26T12:04:00Z"}},
		{name: "started after it lapsed", before: append(reserved(metav1.ConditionFalse, ReasonLapsed), scheduled), want: "False/Started"},
		{name: "started after no start was found", before: append(reserved(metav1.ConditionFalse, ReasonNoStart), scheduled), want: "False/Started"},
		{name: "planner not planned yet", before: reserved(metav1.ConditionTrue, ReasonStartPlanned), r: reservation{unknown: true}, want: "True/StartPlanned"},
	}
	for _, tt := range tests {
		status := &schedulingv1beta1.PodGroupStatus{Conditions: tt.before}
		setReservedCondition(pg, status, tt.r)
		c := meta.FindStatusCondition(status.Conditions, schedulingv1beta1.PodGroupReserved)
		got := ""
		if c != nil {
			got = string(c.Status) + "/" + c.Reason
		}
		if got != tt.want {
			t.Errorf("%s: condition %s, want %s", tt.name, got, tt.want)
			continue
		}
		for _, w := range tt.words {
			if !strings.Contains(c.Message, w) {
				t.Errorf("%s: message %q does not say %q", tt.name, c.Message, w)
			}
		}
		if c == nil {
			continue
		}
		// The start a StartPlanned condition promises reads back from it: the time named, or the
		// time it is read at for room free now.
		read := start.Add(-time.Minute)
		want, wantOK := start, tt.want == "True/StartPlanned" && tt.r.r != nil
		if tt.r.due {
			want = read
		}
		if got, ok := ReservedStart(*c, read); ok != wantOK || ok && !got.Equal(want) {
			t.Errorf("%s: ReservedStart %v, %v; want %v, %v", tt.name, got, ok, want, wantOK)
		}
	}
}
