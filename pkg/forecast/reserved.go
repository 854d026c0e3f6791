package forecast

import "time"

// holding is a reservation's room on one node, held until its gang starts.
type holding struct {
	gang   string
	start  time.Time
	amount Vector
	gone   bool
}

// reserve lays the snapshot's reservations out by node, and by gang.
func (w *world) reserve() {
	w.reserved, w.holdings = make([][]*holding, len(w.s.Nodes)), map[string][]*holding{}
	for _, r := range w.s.Reservations {
		for _, held := range r.Nodes {
			if held.Node >= 0 && held.Node < len(w.reserved) {
				h := &holding{gang: r.Gang, start: r.Start, amount: held.Amount}
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
