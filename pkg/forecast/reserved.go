package forecast

import (
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
)

// holding is a reservation's room on one node, held until its gang starts; queue is the gang's.
type holding struct {
	gang, queue string
	start       time.Time
	amount      Vector
	gone        bool
}

// reserve lays the snapshot's reservations out by node, and by gang.
func (w *world) reserve() {
	w.reserved, w.holdings = make([][]*holding, len(w.s.Nodes)), map[string][]*holding{}
	if len(w.s.Reservations) == 0 {
		return
	}
	queueOf := make(map[string]string, len(w.s.Pending))
	for i := range w.s.Pending {
		queueOf[w.s.Pending[i].Key] = w.s.Pending[i].Queue
	}
	for _, r := range w.s.Reservations {
		for _, held := range r.Nodes {
			if held.Node >= 0 && held.Node < len(w.reserved) {
				h := &holding{gang: r.Gang, queue: queueOf[r.Gang], start: r.Start, amount: held.Amount}
				w.reserved[held.Node] = append(w.reserved[held.Node], h)
				w.holdings[r.Gang] = append(w.holdings[r.Gang], h)
			}
		}
	}
}

// roomFor is the room on node n for a pod of the work of key that is gone by end (zero: never): the
// node's free room, less each other gang's reservation there that the pod would still run into.
func (w *world) roomFor(n int, key string, end time.Time) Vector {
	free := w.free[n]
	var out Vector
	for _, h := range w.reserved[n] {
		if h.gone || h.gang == key || !end.IsZero() && !end.After(h.start) {
			continue
		}
		if out == nil {
			out = free.Clone()
		}
		out.Add(h.amount, -1)
	}
	if out == nil {
		return free
	}
	return out
}

// release lets go of the reservations of the gang of key, which starts.
func (w *world) release(key string) {
	for _, h := range w.holdings[key] {
		h.gone = true
	}
}

// backfillClaim is the part of the queues' claims on idle room that the reservations starting after
// now keep on the nodes for their gangs (policy.ReservedClaims), as the scheduler's admission of a
// pod reads it: the reservations' guards keep that room, so that part of the claims does not bar a
// pod from borrowing. Nil while no such reservation is held.
func (w *world) backfillClaim(now time.Time, snap *policy.Snapshot) v1.ResourceList {
	if len(w.holdings) == 0 {
		return nil
	}
	var byQueue map[string]Vector
	for _, held := range w.holdings {
		for _, h := range held {
			if h.gone || h.queue == "" || !h.start.After(now) {
				continue
			}
			if byQueue == nil {
				byQueue = map[string]Vector{}
			}
			if byQueue[h.queue] == nil {
				byQueue[h.queue] = make(Vector, len(h.amount))
			}
			byQueue[h.queue].Add(h.amount, 1)
		}
	}
	if byQueue == nil {
		return nil
	}
	reserved := make(map[string]v1.ResourceList, len(byQueue))
	for queue, v := range byQueue {
		reserved[queue] = w.queues.list(v)
	}
	return policy.ReservedClaims(snap, reserved)
}
