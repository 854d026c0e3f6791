package controller

import (
	"sync"
	"time"
)

// Usage-driven status writes: every binding and every finished pod changes a queue's allocation,
// every PodGroup or QueueUnit that comes, moves on or goes changes its counts, and a write per change
// would cost the API server more than the bindings themselves (a status write of a custom resource
// is decoded, validated against its schema, given its managed fields and stored, then sent to every
// watcher). So one queue's usage and counts are written at most once per StatusPacing.Interval, and
// when many queues are busy, less often, so that all of them together make about
// StatusPacing.PerSecond writes a second. State changes are written at once: a closed queue's is
// synced at once when its PodGroups or QueueUnits change, or its last pod leaves.

// busyFor is how long after its latest sync a queue counts as busy.
const busyFor = 10 * time.Second

// StatusPacing spaces the status writes that pods' usage causes (QueueStateArgs.Controller).
type StatusPacing struct {
	// Interval is the least time between two usage-driven writes of one queue's status.
	Interval time.Duration
	// PerSecond bounds the usage-driven writes of all busy queues together.
	PerSecond int
	// Checkpoint is how often a queue's usage history is written into its status (when it keeps
	// one); DefaultCheckpointInterval of the config when zero.
	Checkpoint time.Duration
}

// throttle spaces the usage-driven syncs of each queue. The first change after a quiet interval is
// synced at once; the changes that follow are folded into one sync at the interval's end. The
// interval grows with the number of busy queues.
type throttle struct {
	minInterval time.Duration
	perSecond   int
	mu          sync.Mutex
	// next holds, per busy queue, the time of its latest sync scheduled.
	next     map[string]time.Time
	interval time.Duration
	counted  time.Time // when interval was last derived from the busy queues
}

func newThrottle(p StatusPacing) *throttle {
	return &throttle{minInterval: p.Interval, perSecond: max(p.PerSecond, 1), next: map[string]time.Time{}, interval: p.Interval}
}

// delay says how long from now a change of queue waits for its sync.
func (t *throttle) delay(queue string, now time.Time) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.recount(now)
	scheduled, busy := t.next[queue]
	if scheduled.After(now) {
		return scheduled.Sub(now) // the sync to come covers this change
	}
	at := now
	if busy && scheduled.Add(t.interval).After(now) {
		at = scheduled.Add(t.interval)
	}
	t.next[queue] = at
	return at.Sub(now)
}

// recount forgets the queues quiet for busyFor and sets the interval so that the busy queues make
// about perSecond syncs a second; at most once a second.
func (t *throttle) recount(now time.Time) {
	if now.Sub(t.counted) < time.Second {
		return
	}
	t.counted = now
	for queue, at := range t.next {
		if now.Sub(at) > busyFor {
			delete(t.next, queue)
		}
	}
	t.interval = max(t.minInterval, time.Duration(len(t.next))*time.Second/time.Duration(t.perSecond))
}

// forget drops a deleted queue.
func (t *throttle) forget(queue string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.next, queue)
}
