package timeline

import (
	"slices"
	"sync/atomic"
	"time"
)

// Guard is what one reservation leaves of a node from its start: the room a pod still running then
// may take without delaying any reservation on the node.
type Guard struct {
	// Start is when the reservation starts.
	Start time.Time
	// Spare is the node's room at Start less every reservation holding room on it then.
	Spare Vector
	// Gang and Priority are the reservation's.
	Gang     string
	Priority int32
}

// guards are one node's guards, replaced whole by Take, so that readers need no lock.
type guards struct{ list atomic.Pointer[[]Guard] }

func (g *guards) load() []Guard { return *g.list.Load() }

// guard builds a guard at each reservation's start on each of its nodes.
func (p *Plan) guard(t *times) {
	for n, list := range t.heldOn {
		var out []Guard
		for _, h := range list {
			spare := t.nodes[n].Free.clone()
			for _, r := range t.nodes[n].Releases {
				if !t.releaseAt(r.At).After(h.start) {
					spare.add(r.Gives, 1)
				}
			}
			for _, other := range list {
				if !other.start.After(h.start) && (other.end.IsZero() || other.end.After(h.start)) {
					spare.add(other.amount[n], -1)
				}
			}
			out = append(out, Guard{Start: h.start, Spare: spare, Gang: h.gang.Key, Priority: h.priority})
		}
		g := &guards{}
		g.list.Store(&out)
		p.guards[t.nodes[n].Name] = g
	}
}

// Guards returns the guards of a node, in the order of the reservations.
func (p *Plan) Guards(node string) []Guard {
	if p == nil {
		return nil
	}
	if g, ok := p.guards[node]; ok {
		return g.load()
	}
	return nil
}

// Blocking returns the first guard of node that refuses a pod of gang ("" for none) at priority
// that requests req and ends at end at the latest (zero: never), or nil when the pod may take the
// room: it ends before every reservation it would overlap starts, or fits in what they leave. A
// reservation does not guard against its own gang's pods, nor against pods of higher priority,
// which the scheduler takes first anyway.
func (p *Plan) Blocking(node string, req Vector, end time.Time, gang string, priority int32) *Guard {
	if p == nil {
		return nil
	}
	g, ok := p.guards[node]
	if !ok {
		return nil
	}
	for _, guard := range g.load() {
		if guard.Gang == gang || priority > guard.Priority || endsBy(end, guard.Start) {
			continue
		}
		if !req.fits(guard.Spare) {
			return &guard
		}
	}
	return nil
}

// endsBy says whether work that ends at end (zero: never) is gone by start.
func endsBy(end, start time.Time) bool { return !end.IsZero() && !end.After(start) }

// Take counts a pod that took (sign 1) or gave back (sign -1) req on node until end (zero: for
// ever): every guard of the node that starts before the pod ends has that much less (more) spare.
// One caller at a time; readers of Blocking may run beside it.
func (p *Plan) Take(node string, req Vector, end time.Time, sign int64) {
	if p == nil {
		return
	}
	g, ok := p.guards[node]
	if !ok {
		return
	}
	list := append([]Guard(nil), g.load()...)
	for i := range list {
		if endsBy(end, list[i].Start) {
			continue
		}
		list[i].Spare = list[i].Spare.clone()
		list[i].Spare.add(req, -sign)
	}
	g.list.Store(&list)
}

// Backfills says whether a pod that Blocking let onto node takes room a reservation needs later:
// it fits there only because it ends before that reservation starts.
func (p *Plan) Backfills(node string, req Vector, end time.Time, gang string, priority int32) bool {
	if p == nil {
		return false
	}
	g, ok := p.guards[node]
	if !ok {
		return false
	}
	for _, guard := range g.load() {
		if guard.Gang != gang && priority <= guard.Priority && endsBy(end, guard.Start) && !req.fits(guard.Spare) {
			return true
		}
	}
	return false
}

// Without is the plan less the reservations of gangs: their guards go, and the room they held
// goes back to the spare of the guards left on their nodes. What Take counted stays counted. One
// caller at a time, as for Take.
func (p *Plan) Without(gangs []string) *Plan {
	out := &Plan{Dims: p.Dims, At: p.At, Unplaced: p.Unplaced, guards: make(map[string]*guards, len(p.guards))}
	var dropped []*Reservation
	for i := range p.Reservations {
		if r := &p.Reservations[i]; slices.Contains(gangs, r.Gang) {
			dropped = append(dropped, r)
		} else {
			out.Reservations = append(out.Reservations, *r)
		}
	}
	for node, g := range p.guards {
		var list []Guard
		for _, guard := range g.load() {
			if slices.Contains(gangs, guard.Gang) {
				continue
			}
			guard.Spare = guard.Spare.clone()
			for _, r := range dropped {
				if r.holdsAt(guard.Start) {
					guard.Spare.add(r.amountOn(node), 1)
				}
			}
			list = append(list, guard)
		}
		if len(list) > 0 {
			kept := &guards{}
			kept.list.Store(&list)
			out.guards[node] = kept
		}
	}
	return out
}

// holdsAt says whether the reservation holds its room at t.
func (r *Reservation) holdsAt(t time.Time) bool {
	return !r.Start.After(t) && (r.Open() || r.End.After(t))
}

// amountOn is the reservation's room on node, or nil.
func (r *Reservation) amountOn(node string) Vector {
	for _, share := range r.Nodes {
		if share.Node == node {
			return share.Amount
		}
	}
	return nil
}
