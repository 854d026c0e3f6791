package controller

import (
	"sync"
	"time"
)

// usageWriteInterval is the least time between two status writes of one queue caused by its usage:
// every binding and every finished pod changes a queue's allocation, and one write per change would
// cost the API server as much as the bindings themselves.
const usageWriteInterval = time.Second

// throttle spaces the usage-driven syncs of each queue at least interval apart. The first change
// after a quiet interval is synced at once; the changes that follow within the interval are folded
// into one sync at its end.
type throttle struct {
	interval time.Duration
	mu       sync.Mutex
	// next holds, per queue, the time of its latest sync scheduled.
	next map[string]time.Time
}

func newThrottle(interval time.Duration) *throttle {
	return &throttle{interval: interval, next: map[string]time.Time{}}
}

// delay says how long from now a change of queue waits for its sync.
func (t *throttle) delay(queue string, now time.Time) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	scheduled := t.next[queue]
	if scheduled.After(now) {
		return scheduled.Sub(now) // the sync to come covers this change
	}
	at := scheduled.Add(t.interval)
	if at.Before(now) {
		at = now
	}
	t.next[queue] = at
	return at.Sub(now)
}

// forget drops a deleted queue.
func (t *throttle) forget(queue string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.next, queue)
}
