package gang

import (
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// members counts a gang's pods from the scheduler's own pod informer, whose store is current before
// any of its handlers run, plus the members this scheduler reserved and has not seen bound yet.
type members struct {
	pods func(key string) []*v1.Pod

	mu       sync.Mutex
	reserved map[types.UID]bool
	// waits holds when the wait of a member at Permit ends.
	waits map[types.UID]time.Time
	// rejected marks members rejected because of a sibling, whose Unreserve is not a new failure.
	rejected map[types.UID]bool
	// denied holds, per gang rejected since the cluster last freed room, when the denial lapses: its
	// members reserve nothing until then, until room is freed, or until a queue's spec changes.
	denied map[string]denial
	// queues reads the version of the queues' specs (accounting.QueueSpecsVersion).
	queues func() int64
}

// denial is when a gang's denial lapses, and the version of the queues' specs it was made under: a
// queue's new capability, weight or reclaimable flag may let the gang in, whichever handler hears of
// the change first.
type denial struct {
	until  time.Time
	queues int64
}

// gangCount is how a gang's live members stand.
type gangCount struct {
	// live counts members not finished and not being deleted.
	live int32
	// assigned counts live members bound or reserved on a node.
	assigned int32
}

func newMembers(pods func(key string) []*v1.Pod, queues func() int64) *members {
	return &members{pods: pods, reserved: map[types.UID]bool{}, waits: map[types.UID]time.Time{}, rejected: map[types.UID]bool{},
		denied: map[string]denial{}, queues: queues}
}

// deny marks the gang key rejected until room is freed or a queue's spec changes, for at most window.
func (m *members) deny(key string, window time.Duration) {
	version := m.queues()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.denied[key] = denial{until: time.Now().Add(window), queues: version}
}

func (m *members) isDenied(key string) bool {
	m.mu.Lock()
	d, ok := m.denied[key]
	m.mu.Unlock()
	return ok && time.Now().Before(d.until) && d.queues == m.queues()
}

// roomFreed lifts every denial but that of the gang a freed pod belonged to, and returns the gangs
// it lifted.
func (m *members) roomFreed(except string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var lifted []string
	for key := range m.denied {
		if key != except {
			delete(m.denied, key)
			lifted = append(lifted, key)
		}
	}
	return lifted
}

// count reads the live and assigned members of the gang key.
func (m *members) count(key string) gangCount {
	pods := m.pods(key)
	m.mu.Lock()
	defer m.mu.Unlock()
	c := gangCount{live: int32(len(pods))}
	for _, pod := range pods {
		if pod.Spec.NodeName != "" || m.reserved[pod.UID] {
			c.assigned++
		}
	}
	return c
}

func (m *members) reserve(uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reserved[uid] = true
}

// waiting records that a member waits at Permit until deadline.
func (m *members) waiting(uid types.UID, deadline time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.waits[uid] = deadline
}

// rejectedBySibling marks a member rejected because a sibling failed.
func (m *members) rejectedBySibling(uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rejected[uid] = true
}

// release forgets a reservation: the pod was unreserved, bound (the informer now says so), or
// deleted. It returns whether a sibling caused it, and when the pod's wait at Permit ended or would
// have ended (zero when it did not wait).
func (m *members) release(uid types.UID) (bySibling bool, deadline time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	bySibling, deadline = m.rejected[uid], m.waits[uid]
	delete(m.reserved, uid)
	delete(m.rejected, uid)
	delete(m.waits, uid)
	return bySibling, deadline
}
