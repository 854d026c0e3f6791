package gang

import (
	"maps"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/gangs"
)

// members counts a gang's pods from the scheduler's own pod informer, whose store is current before
// any of its handlers run; a member is assigned when the informer has it bound, or the accounting's
// pod table holds it (assumed at Reserve until Unreserve or its binding): one record of the
// reservations, the table's.
type members struct {
	pods func(key string) []*v1.Pod
	// holds says whether the accounting's pod table has the pod holding room (accounting.PodTable.Holds).
	holds func(*v1.Pod) bool
	// clock tells the time the denials and the waits at Permit are measured against.
	clock clock.PassiveClock

	mu sync.Mutex
	// waits holds when the wait of a member at Permit ends.
	waits map[types.UID]time.Time
	// rejected marks members rejected because of a sibling, whose Unreserve is not a new failure.
	rejected map[types.UID]bool
	// denied holds, per gang rejected since the cluster last freed room, when the denial lapses: its
	// members reserve nothing until then, until room is freed, or until a queue's spec changes.
	denied map[string]denial
	// queues reads the version of the queues' specs the latest snapshot rests on (its QueueSpecs).
	queues func() int64
	// attempts holds, per gang, the version of the queues' specs the shares of the latest attempt of
	// one of its members were computed under (policy.Snapshot's QueueSpecs), which lags queues while
	// a computation is due: what that attempt decided rests on shares of that version or newer.
	attempts map[string]int64
}

// denial is when a gang's denial lapses, and the version of the queues' specs it was made under: a
// queue's new capability, weight or reclaimable flag may let the gang in, whichever handler hears of
// the change first.
type denial struct {
	until  time.Time
	queues int64
}

// gangCount is how a gang's live members stand: those not finished and not being deleted, and of
// them those bound or reserved on a node.
type gangCount struct {
	live, assigned gangs.Members
}

// liveLack says what the live members lack to make the gang whole, "" when nothing.
func (c gangCount) liveLack(pg *schedulingv1beta1.PodGroup) string { return gangs.Lacking(pg, c.live) }

// assignedLack says what the assigned members lack to make the gang whole, "" when nothing.
func (c gangCount) assignedLack(pg *schedulingv1beta1.PodGroup) string {
	return gangs.Lacking(pg, c.assigned)
}

func newMembers(pods func(key string) []*v1.Pod, holds func(*v1.Pod) bool, queues func() int64, clk clock.PassiveClock) *members {
	return &members{pods: pods, holds: holds, clock: clk, waits: map[types.UID]time.Time{}, rejected: map[types.UID]bool{},
		denied: map[string]denial{}, queues: queues, attempts: map[string]int64{}}
}

// attempt notes that an attempt of a member of gang key begins on shares computed under version of
// the queues' specs.
func (m *members) attempt(key string, version int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.attempts[key] = version
}

// deny marks the gang key rejected until room is freed or a queue's spec changes, for at most window.
// The denial carries the version of the queues' specs its attempt's shares were computed under, not
// the version of now: a spec change stored before the denial but not yet in those shares (a borrower
// turned reclaimable a moment ago) voids it, whichever handler hears of the change first.
func (m *members) deny(key string, window time.Duration) {
	version := m.queues()
	m.mu.Lock()
	defer m.mu.Unlock()
	if seen, ok := m.attempts[key]; ok {
		version = seen
	}
	m.denied[key] = denial{until: m.clock.Now().Add(window), queues: version}
}

// forgetGang drops what is kept of gang key, whose PodGroup is gone.
func (m *members) forgetGang(key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.attempts, key)
	delete(m.denied, key)
}

func (m *members) isDenied(key string) bool {
	m.mu.Lock()
	d, ok := m.denied[key]
	m.mu.Unlock()
	return ok && m.clock.Now().Before(d.until) && d.queues == m.queues()
}

// roomFreed lifts every denial, and returns the gangs it lifted.
func (m *members) roomFreed() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	lifted := slices.Collect(maps.Keys(m.denied))
	clear(m.denied)
	return lifted
}

// count reads the live and assigned members of the gang key.
func (m *members) count(key string) gangCount {
	var c gangCount
	for _, pod := range m.pods(key) {
		c.live.Add(pod)
		if pod.Spec.NodeName != "" || m.holds(pod) {
			c.assigned.Add(pod)
		}
	}
	return c
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

// release forgets what is kept of a member's attempt: the pod was unreserved, bound (the informer
// now says so), or deleted. It returns whether a sibling caused it, and when the pod's wait at
// Permit ended or would have ended (zero when it did not wait).
func (m *members) release(uid types.UID) (bySibling bool, deadline time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	bySibling, deadline = m.rejected[uid], m.waits[uid]
	delete(m.rejected, uid)
	delete(m.waits, uid)
	return bySibling, deadline
}
