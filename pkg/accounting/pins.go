package accounting

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
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

// unpinOnDelete forgets the pin of an object once the informer deleted it (its indexes are updated
// before any handler runs).
func (p *pins) unpinOnDelete(informer cache.SharedIndexInformer, uidOf func(any) (types.UID, bool)) error {
	_, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		DeleteFunc: func(obj any) {
			if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tombstone.Obj
			}
			if uid, ok := uidOf(obj); ok {
				p.mu.Lock()
				delete(p.byUID, uid)
				p.mu.Unlock()
			}
		},
	})
	return err
}
