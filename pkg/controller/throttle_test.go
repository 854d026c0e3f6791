package controller

import (
	"fmt"
	"slices"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func TestThrottleSpacesSyncsOfAQueue(t *testing.T) {
	th := newThrottle(StatusPacing{Interval: time.Second, PerSecond: 25})
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

// With more busy queues than the write budget allows once a second, each queue waits longer; when
// they go quiet, the interval comes back to one second.
func TestThrottleStretchesWithBusyQueues(t *testing.T) {
	th := newThrottle(StatusPacing{Interval: time.Second, PerSecond: 10})
	for i := range 30 {
		th.delay(fmt.Sprint("q", i), at(0))
	}
	th.delay("q0", at(1500)) // recounts: 30 busy queues at 10 writes a second
	if got := th.delay("q1", at(1600)); got != 1400*time.Millisecond {
		t.Errorf("a busy queue among 30: delay %v, want 1.4 s (3 s after its last sync)", got)
	}
	th.delay("q0", at(20000)) // the others are quiet for longer than busyFor
	if got := th.delay("q0", at(21100)); got != 0 {
		t.Errorf("after the others went quiet: delay %v, want 0 (interval back to 1 s, 1.1 s passed)", got)
	}
}

// The status pacing runs on the controller's clock: a queue's first usage change is synced at once,
// the next ones within the interval wait, and once the queue has been quiet on the clock a change
// is synced at once again; no time passes but the clock's.
func TestStatusPacingRunsOnTheClock(t *testing.T) {
	fake := testingclock.NewFakeClock(t0)
	c := &Controller{clock: fake, usageWrites: newThrottle(StatusPacing{Interval: 5 * time.Second, PerSecond: 25}), wq: newWorkqueues(fake)}
	defer c.wq.shutDown()
	c.enqueueQueuePaced("a")
	if got := drain(c.wq.queues); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("after the first change: %v, want a synced at once", got)
	}
	c.enqueueQueuePaced("a")
	fake.Step(4 * time.Second)
	c.enqueueQueuePaced("a")
	if got := drain(c.wq.queues); len(got) != 0 {
		t.Fatalf("changes within the interval on the clock: %v synced at once, want them to wait", got)
	}
	fake.SetTime(t0.Add(time.Minute))
	c.enqueueQueuePaced("a")
	if got := drain(c.wq.queues); !slices.Equal(got, []string{"a"}) {
		t.Errorf("a change after a quiet minute on the clock: %v, want a synced at once", got)
	}
}
