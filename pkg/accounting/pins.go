package accounting

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// pins remembers the queue each PodGroup and QueueUnit in the informers' stores was first resolved
// to, by UID. Their spec.queue is immutable, but the namespace annotation that names the queue of
// those without one may change: a pinned queue keeps an object in one queue for its life, and keeps
// the informers' indexes right, which compute an object's old index values again when it changes.
type pins struct {
	mu    sync.Mutex
	byUID map[types.UID]string
}

// queue returns the pinned queue of uid, pinning resolve's answer on first use. An object without a
// UID (one not stored by an API server) is resolved each time.
func (p *pins) queue(uid types.UID, resolve func() string) string {
	if uid == "" {
		return resolve()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if q, ok := p.byUID[uid]; ok {
		return q
	}
	q := resolve()
	p.byUID[uid] = q
	return q
}

// lookup returns the pinned queue of uid, if any.
func (p *pins) lookup(uid types.UID) (string, bool) {
	if uid == "" {
		return "", false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	q, ok := p.byUID[uid]
	return q, ok
}

// unpin forgets the pin of a deleted object.
func (p *pins) unpin(uid types.UID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.byUID, uid)
}
