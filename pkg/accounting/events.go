package accounting

import "sync"

// Events is the accounting's event bus: what changed in the queue layer, told to whoever subscribed,
// each topic by the one part of the accounting that owns the fact. Subscribers may come at any time
// and from then on hear of every change; they are called with no lock of the accounting held, and
// must not block. QueueUsage and RoomFreed are told by the goroutine that changed the usage: the pod
// informer's handler, Reserve or Unreserve, or a plugin's PreEnqueue counting a new pod on sight
// under the scheduling queue's lock, which changes QueueUsage only (a new pod frees no room), so
// QueueUsage's subscribers must not take that lock (Activate). The topics of the snapshots
// (Deserved, SharesComputed, SpareGrown) are told on a goroutine of the accounting's, never the
// builder's.
type Events struct {
	// QueueUsage tells the name of a queue whose usage changed.
	QueueUsage Topic[string]
	// RoomFreed tells of room a queue's pods gave back.
	RoomFreed Topic[RoomFreed]
	// Deserved tells the name of a queue whose deserved share or effective weights changed, after the
	// snapshot that holds the change was built.
	Deserved Topic[string]
	// SharesComputed tells that a snapshot's build computed the shares.
	SharesComputed Topic[struct{}]
	// SpareGrown tells that a snapshot found some queue holding more above its share than the
	// snapshot before it.
	SpareGrown Topic[struct{}]
	// Reservation tells the key ("namespace/name") of a PodGroup whose reservation was made, moved
	// or dropped.
	Reservation Topic[string]
	// WorkReleased tells the queue of admitted work that may have given back room it reserved there:
	// a PodGroup or QueueUnit deleted (its queue read before the queue it was pinned to is
	// forgotten), a PodGroup that left Pending or Inqueue or whose minResources changed in one.
	WorkReleased Topic[string]
}

// Topic is one kind of event and its subscribers.
type Topic[E any] struct {
	mu sync.Mutex
	fs []func(E)
}

// Subscribe registers f to be told of every event of the topic from now on.
func (t *Topic[E]) Subscribe(f func(E)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.fs = append(t.fs, f)
}

// SubscribeSignal registers f to be told of every event of the topic from now on, whatever it says.
func (t *Topic[E]) SubscribeSignal(f func()) { t.Subscribe(func(E) { f() }) }

func (t *Topic[E]) notify(e E) {
	t.mu.Lock()
	fs := t.fs
	t.mu.Unlock()
	for _, f := range fs {
		f(e)
	}
}
