package accounting

import (
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/utils/clock"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/history"
)

// Ledger is each queue's usage history (pkg/history): what its own pods held, decayed. The
// snapshots' builds advance it, one at a time; readers take it as of now.
type Ledger struct {
	settings history.Settings
	clock    clock.PassiveClock
	store    *Store
	// bringUpToNow builds a snapshot, whose build advances the ledger to now.
	bringUpToNow func()
	mu           sync.RWMutex
	queues       map[string]*ledgerEntry
	// round numbers the advances: an entry not reached by the latest is a deleted queue's.
	round uint64
}

// ledgerEntry is one queue's history: its usage at used.At, and what it has held since, which
// advancing it over any later interval accounts for exactly until that changes.
type ledgerEntry struct {
	used      history.Usage
	allocated v1.ResourceList
	// entered is the queue's count of requests that started holding (usage.entered) already
	// charged.
	entered v1.ResourceList
	round   uint64
}

// advance brings the ledger up to now for the queues that exist: a queue whose allocation changed,
// or whose pods started holding, is advanced over the time since its last advance with what it held
// then; the others keep their entries, which stay exact as they are. A queue seen for the first time
// resumes from the checkpoint in its status, holding what it holds now since then; a queue gone is
// forgotten. The caller advances it once the pods are counted, so that what queues hold is known.
func (l *Ledger) advance(queues []*schedulingv1beta1.Queue, usage map[string]QueueUsage, entered map[string]v1.ResourceList, now time.Time) {
	if !l.settings.Keeps() {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.queues == nil {
		l.queues = make(map[string]*ledgerEntry, len(queues))
	}
	l.round++
	for _, q := range queues {
		held := usage[q.Name].Allocated
		e := l.queues[q.Name]
		if e == nil {
			// What the queue holds now counts as held since its checkpoint: the time between the
			// checkpoint and the start is not lost.
			e = &ledgerEntry{used: resumed(q, now), allocated: held, entered: entered[q.Name]}
			l.queues[q.Name] = e
		}
		e.round = l.round
		l.advanceEntry(e, held, entered[q.Name], now)
	}
	for name, e := range l.queues {
		if e.round != l.round {
			delete(l.queues, name)
		}
	}
}

// advanceQueues brings the ledger up to now for the named queues it keeps already, each holding
// what held gives (its allocation, and its count of requests that started holding): a pod placed
// or let go counts from the snapshot that first holds it, computed or not. A queue not kept yet
// waits for the next computation that builds the tree anew (a queue that came is a change of the
// tree), which resumes it from its checkpoint.
func (l *Ledger) advanceQueues(names map[string]struct{}, held func(queue string) (allocated, entered v1.ResourceList), now time.Time) {
	if !l.settings.Keeps() || len(names) == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for name := range names {
		if e := l.queues[name]; e != nil {
			allocated, entered := held(name)
			l.advanceEntry(e, allocated, entered, now)
		}
	}
}

// advanceEntry advances e over the time since its last advance with what it held then, when what
// it holds (held) or its count of entries (entered) changed since; call with l.mu held.
func (l *Ledger) advanceEntry(e *ledgerEntry, held, entered v1.ResourceList, now time.Time) {
	if sameList(held, e.allocated) && sameList(entered, e.entered) {
		return
	}
	// Negative where pods were unreserved since: their charge is taken back.
	charged := quota.Subtract(entered, e.entered)
	if quota.Equals(held, e.allocated) && quota.IsZero(charged) {
		return
	}
	e.used = l.settings.Advance(e.used, e.allocated, quota.RemoveZeros(charged), now)
	e.allocated, e.entered = held, entered
}

// resumed is a queue's usage as its status's checkpoint left it, or none.
func resumed(q *schedulingv1beta1.Queue, now time.Time) history.Usage {
	if c := q.Status.Usage; c != nil {
		return history.Restore(c.ResourceSeconds, c.Time.Time, now)
	}
	return history.Usage{At: now}
}

// at is every queue's own usage at now, rounded as a checkpoint stores it (history.Stored), so that
// the shares computed from it are those a restore from the checkpoint gives; nil without a history.
func (l *Ledger) at(now time.Time) map[string]history.Usage {
	if !l.settings.Keeps() {
		return nil
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := make(map[string]history.Usage, len(l.queues))
	for name, e := range l.queues {
		u := l.settings.Advance(e.used, e.allocated, nil, now)
		for res, v := range u.ResourceSeconds {
			u.ResourceSeconds[res] = history.Stored(v)
		}
		out[name] = u
	}
	return out
}

// of is one queue's own usage at now; false without a history or for a queue not seen yet.
func (l *Ledger) of(queue string, now time.Time) (history.Usage, bool) {
	if !l.settings.Keeps() {
		return history.Usage{}, false
	}
	l.mu.RLock()
	e, ok := l.queues[queue]
	var entry ledgerEntry
	if ok {
		entry = *e // the entry changes under the write lock; its lists and maps are replaced, never changed
	}
	l.mu.RUnlock()
	if !ok {
		return history.Usage{}, false
	}
	// Advanced since now (a checkpoint's stamp, to the second): taken back as if what the queue holds
	// had been held since, as a restore from that checkpoint counts it.
	return l.settings.Rewind(l.settings.Advance(entry.used, entry.allocated, nil, now), entry.allocated, now), true
}

// Settings are the usage history's settings.
func (l *Ledger) Settings() history.Settings { return l.settings }

// Remembered is a queue's decayed usage now, its own pods' and those of the queues below it
// (Subtree) together; false when no usage is kept or the queue is not known yet.
//
// It is taken at the second, so that readers within one second read the same.
func (l *Ledger) Remembered(queue string) (history.Usage, bool) {
	l.bringUpToNow()
	now := l.clock.Now().Truncate(time.Second)
	own, ok := l.of(queue, now)
	if !ok {
		return own, false
	}
	total := history.Usage{ResourceSeconds: map[v1.ResourceName]float64{}, At: now}
	add := func(u history.Usage) {
		for name, v := range u.ResourceSeconds {
			total.ResourceSeconds[name] += v
		}
	}
	add(own)
	seen := map[string]bool{queue: true}
	var below func(name string)
	below = func(name string) {
		for _, c := range l.store.Children(name) {
			if seen[c.Name] {
				continue // a cycle the webhook did not see: counted once
			}
			seen[c.Name] = true
			if u, ok := l.of(c.Name, now); ok {
				add(u)
			}
			below(c.Name)
		}
	}
	below(queue)
	return total, true
}

// Own is a queue's own pods' decayed usage at at, without the queues below it: what its
// checkpoint holds. A time to come counts what the queue holds now as held until then; a time before
// the ledger's last advance takes it back as if what the queue holds had been held since
// (history.Rewind).
func (l *Ledger) Own(queue string, at time.Time) (history.Usage, bool) {
	l.bringUpToNow()
	return l.of(queue, at)
}
