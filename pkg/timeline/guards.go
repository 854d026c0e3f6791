package timeline

import (
	"slices"
	"sync/atomic"
	"time"
)

// Guard is what one reservation leaves of a node from its start: the room a pod still running then
// may take without delaying any reservation on the node, and what the reservation's own gang took
// of its share there.
type Guard struct {
	// Start is when the reservation starts.
	Start time.Time
	// Spare is the node's room at Start less every reservation holding room on it then.
	Spare Vector
	// Own is the reservation's room on the node; OwnTaken what its gang's members placed there
	// took: beyond Own, they take from Spare.
	Own, OwnTaken Vector
	// Gang is the reservation's.
	Gang string
}

// left is the room a pod may take at the guard's start: for a member of the reservation's own gang,
// the spare and what is left of the gang's share; for any other pod, the spare less what the gang's
// members took beyond their share.
func (g *Guard) left(own bool) Vector {
	out := g.Spare.Clone()
	for i := range out {
		if over := g.OwnTaken[i] - g.Own[i]; own || over > 0 {
			out[i] -= over
		}
	}
	return out
}

// guards are one node's guards, replaced whole by Take, so that readers need no lock.
type guards struct{ list atomic.Pointer[[]Guard] }

func (g *guards) load() []Guard { return *g.list.Load() }

// guard builds a guard at each reservation's start on each of its nodes.
func (p *Plan) guard(t *times) {
	for n, list := range t.heldOn {
		var out []Guard
		for _, h := range list {
			spare := t.nodes[n].Free.Clone()
			for _, r := range t.nodes[n].Releases {
				if !t.releaseAt(r.At).After(h.start) {
					spare.Add(r.Gives, 1)
				}
			}
			for _, other := range list {
				if other.holdsAt(h.start) {
					spare.Add(other.amount[n], -1)
				}
			}
			out = append(out, Guard{Start: h.start, Spare: spare, Own: h.amount[n].Clone(), OwnTaken: make(Vector, t.dims),
				Gang: h.gang.Key})
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

// Pod is a pod as the guards read it: what it requests, when it is gone at the latest if it starts
// now (zero: never) and its gang ("" for none).
type Pod struct {
	Requests Vector
	End      time.Time
	Gang     string
}

// Blocking returns the first guard of node that refuses the pod, or nil when the pod may take the
// room: it is gone before every reservation it would overlap starts (its end rounded up to the
// plan's resolution), or fits in what they leave. A member of a reservation's gang may also take
// what is left of the gang's share there. A pod's priority does not let it in: the room was
// promised.
func (p *Plan) Blocking(node string, pod Pod) *Guard {
	if p == nil {
		return nil
	}
	g, ok := p.guards[node]
	if !ok {
		return nil
	}
	end := p.rounded(pod.End)
	for _, guard := range g.load() {
		own := guard.Gang == pod.Gang && pod.Gang != ""
		if !own && endsBy(end, guard.Start) {
			continue
		}
		if !pod.Requests.Fits(guard.left(own)) {
			return &guard
		}
	}
	return nil
}

// Backfills says whether a pod that Blocking let onto node takes room a reservation needs later: it
// fits there only because it is gone before that reservation starts.
func (p *Plan) Backfills(node string, pod Pod) bool {
	if p == nil {
		return false
	}
	g, ok := p.guards[node]
	if !ok {
		return false
	}
	end := p.rounded(pod.End)
	for _, guard := range g.load() {
		if guard.Gang != pod.Gang && endsBy(end, guard.Start) && !pod.Requests.Fits(guard.left(false)) {
			return true
		}
	}
	return false
}

// rounded is end rounded up to the plan's resolution, as the plan rounds the running pods' ends.
func (p *Plan) rounded(end time.Time) time.Time {
	if end.IsZero() {
		return end
	}
	return ceil(end, p.Resolution)
}

// endsBy says whether work that ends at end (zero: never) is gone by start.
func endsBy(end, start time.Time) bool { return !end.IsZero() && !end.After(start) }

// Take counts a pod that took (sign 1) or gave back (sign -1) room on node: a member of a
// reservation's gang counts against the gang's share there; for every other guard that starts
// before the pod is gone, the pod takes from the spare. One caller at a time; readers of Blocking
// may run beside it.
func (p *Plan) Take(node string, pod Pod, sign int64) {
	if p == nil {
		return
	}
	g, ok := p.guards[node]
	if !ok {
		return
	}
	end := p.rounded(pod.End)
	list := slices.Clone(g.load())
	for i := range list {
		switch guard := &list[i]; {
		case guard.Gang == pod.Gang && pod.Gang != "":
			guard.OwnTaken = guard.OwnTaken.Clone()
			guard.OwnTaken.Add(pod.Requests, sign)
		case !endsBy(end, guard.Start):
			guard.Spare = guard.Spare.Clone()
			guard.Spare.Add(pod.Requests, -sign)
		}
	}
	g.list.Store(&list)
}

// Without is the plan less the reservations of gangs, which are no longer considered at all: their
// guards go, and the room they held goes back to the spare of the guards left on their nodes. What
// Take counted stays counted, and the gangs set aside stay so. One caller at a time, as for Take.
func (p *Plan) Without(gangs []string) *Plan {
	out := &Plan{Dims: p.Dims, At: p.At, Resolution: p.Resolution, Lapsed: p.Lapsed, guards: make(map[string]*guards, len(p.guards))}
	for _, gang := range p.Unplaced {
		if !slices.Contains(gangs, gang) {
			out.Unplaced = append(out.Unplaced, gang)
		}
	}
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
			guard.Spare = guard.Spare.Clone()
			for _, r := range dropped {
				if r.holdsAt(guard.Start) {
					guard.Spare.Add(r.amountOn(node), 1)
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
