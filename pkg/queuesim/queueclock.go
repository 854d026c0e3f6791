package queuesim

import (
	"time"

	utilclock "k8s.io/utils/clock"
)

// queueClock is simulated time as the scheduler's queue reads it: from the moment it is made, it
// runs scale times faster than the real clock, and its timers and tickers fire after a scale-th of
// the simulated durations they are given. The scheduler then backs off, flushes its backoff queue
// and sends unschedulable pods back to be tried at the pace it has on a real cluster, in simulated
// time, at any time scale. The instants its timers and tickers send are the real ones: the queue
// reads only that they fired.
type queueClock struct{ c clock }

var _ utilclock.WithTicker = queueClock{}

// newQueueClock is a queue clock that runs scale times faster than the real one from now.
func newQueueClock(scale float64) queueClock {
	return queueClock{clock{start: time.Now(), scale: scale}}
}

func (q queueClock) Now() time.Time                         { return q.c.start.Add(q.c.now()) }
func (q queueClock) Since(t time.Time) time.Duration        { return q.Now().Sub(t) }
func (q queueClock) After(d time.Duration) <-chan time.Time { return time.After(q.c.real(d)) }
func (q queueClock) Sleep(d time.Duration)                  { <-q.After(d) }
func (q queueClock) Tick(d time.Duration) <-chan time.Time  { return q.NewTicker(d).C() }

func (q queueClock) NewTimer(d time.Duration) utilclock.Timer {
	return scaledTimer{Timer: time.NewTimer(q.c.real(d)), c: q.c}
}

// NewTicker ticks every d of simulated time, a nanosecond of real time at least (a ticker's least).
func (q queueClock) NewTicker(d time.Duration) utilclock.Ticker {
	return realTicker{time.NewTicker(max(q.c.real(d), 1))}
}

// scaledTimer is a real timer set to the real time that simulated durations take.
type scaledTimer struct {
	*time.Timer
	c clock
}

func (t scaledTimer) C() <-chan time.Time        { return t.Timer.C }
func (t scaledTimer) Reset(d time.Duration) bool { return t.Timer.Reset(t.c.real(d)) }

// realTicker is a real ticker, as utilclock.Ticker.
type realTicker struct{ *time.Ticker }

func (t realTicker) C() <-chan time.Time { return t.Ticker.C }
