package accounting

import (
	"sync"
	"time"
)

// reclaims holds the gangs whose reclaim is under way, as the Reclaim plugin records them: their
// victims are leaving and their missing members are nominated to the room being freed. Gang reads
// it so that it neither denies such a gang nor clears its members' nominations meanwhile.
type reclaims struct {
	mu    sync.Mutex
	until map[string]time.Time
}

// ReclaimUnderWay records that the gang key ("namespace/name") reclaims until at most until.
func (a *Accounting) ReclaimUnderWay(key string, until time.Time) {
	a.reclaims.mu.Lock()
	defer a.reclaims.mu.Unlock()
	if a.reclaims.until == nil {
		a.reclaims.until = map[string]time.Time{}
	}
	a.reclaims.until[key] = until
}

// ReclaimOver records that the gang's reclaim ended.
func (a *Accounting) ReclaimOver(key string) {
	a.reclaims.mu.Lock()
	defer a.reclaims.mu.Unlock()
	delete(a.reclaims.until, key)
}

// Reclaiming says whether the gang's reclaim is under way.
func (a *Accounting) Reclaiming(key string) bool {
	a.reclaims.mu.Lock()
	defer a.reclaims.mu.Unlock()
	until, ok := a.reclaims.until[key]
	return ok && time.Now().Before(until)
}
