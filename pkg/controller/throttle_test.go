package controller

import (
	"testing"
	"time"
)

func TestThrottleSpacesSyncsOfAQueue(t *testing.T) {
	th := newThrottle(time.Second)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	for _, step := range []struct {
		queue string
		now   int // ms after t0
		want  time.Duration
	}{
		{"a", 0, 0},                        // quiet before: at once
		{"a", 300, 700 * time.Millisecond}, // within the interval: at its end
		{"a", 500, 500 * time.Millisecond}, // folded into the same sync
		{"b", 500, 0},                      // other queues are not held back
		{"a", 1000, time.Second},           // the sync due now may have read before it
		{"a", 1200, 800 * time.Millisecond},
		{"a", 5000, 0}, // quiet again
	} {
		if got := th.delay(step.queue, at(step.now)); got != step.want {
			t.Errorf("change of %s at %d ms: delay %v, want %v", step.queue, step.now, got, step.want)
		}
	}
	th.forget("a")
	if got := th.delay("a", at(5100)); got != 0 {
		t.Errorf("a forgotten queue: delay %v, want 0", got)
	}
}
