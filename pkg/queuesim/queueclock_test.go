package queuesim

import (
	"testing"
	"time"
)

// The scheduler's queue clock runs the scenario's time scale faster than the real clock: a timer of
// a simulated minute fires at 1,000× well within the real second it takes there, a ticker too, and
// the simulated time gone meanwhile is at least 1,000 times the real time gone.
func TestQueueClockRunsAtTheTimeScale(t *testing.T) {
	q := newQueueClock(1000)
	simStart := q.Now()
	realStart := time.Now()
	timer := q.NewTimer(time.Minute)
	ticker := q.NewTicker(time.Minute)
	defer ticker.Stop()
	real := time.NewTimer(time.Minute)
	defer real.Stop()
	for _, c := range []<-chan time.Time{timer.C(), ticker.C()} {
		select {
		case <-c:
		case <-real.C:
			t.Fatal("a simulated minute at 1,000× did not pass within a real minute")
		}
	}
	realGone, simGone := time.Since(realStart), q.Since(simStart)
	if simGone < 1000*realGone || simGone < time.Minute {
		t.Errorf("%s of real time gone, %s of simulated: want at least 1,000 times as much, and the minute the timer waited", realGone, simGone)
	}
	timer.Reset(time.Hour)
	if !timer.Stop() {
		t.Error("a timer reset for a simulated hour: want it running until stopped")
	}
}
