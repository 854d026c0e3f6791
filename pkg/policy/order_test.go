package policy

import (
	"slices"
	"testing"
	"time"
)

// Work is taken by priority, then age, then namespace and name: the order is total and the same
// whatever order the work arrives in.
func TestAheadOrdersByPriorityAgeAndName(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	want := []Place{
		{Priority: 100, Since: t0.Add(time.Hour), Namespace: "z", Name: "urgent"},
		{Priority: 0, Since: t0, Namespace: "b", Name: "a"},
		{Priority: 0, Since: t0.Add(time.Second), Namespace: "a", Name: "z"},
		{Priority: 0, Since: t0.Add(time.Second), Namespace: "b", Name: "a"},
		{Priority: 0, Since: t0.Add(time.Second), Namespace: "b", Name: "b"},
		{Priority: -5, Since: t0.Add(-time.Hour), Namespace: "a", Name: "a"},
	}
	for _, start := range [][]int{{5, 4, 3, 2, 1, 0}, {2, 0, 5, 1, 4, 3}} {
		got := make([]Place, 0, len(want))
		for _, i := range start {
			got = append(got, want[i])
		}
		slices.SortFunc(got, func(a, b Place) int {
			if Ahead(a, b) {
				return -1
			}
			if Ahead(b, a) {
				return 1
			}
			return 0
		})
		if !slices.Equal(got, want) {
			t.Errorf("from %v: got %v, want %v", start, got, want)
		}
	}
	if Ahead(want[0], want[0]) {
		t.Error("a place is ahead of itself")
	}
}
