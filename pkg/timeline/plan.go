package timeline

import (
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
)

// Plan is the reservations of the first waiting gangs, made at one time, and the guards that keep
// other pods out of their room. It is built by Compute and then read; only Take changes it, one
// caller at a time, while any number read (see guards).
type Plan struct {
	// Dims names the resources of every vector in the plan.
	Dims []v1.ResourceName
	// At is when the plan was made.
	At time.Time
	// Resolution is the step the plan rounds ends up to.
	Resolution time.Duration
	// Reservations are in the gangs' order.
	Reservations []Reservation
	// Unplaced are the gangs considered that cannot start within the window, in order.
	Unplaced []string
	// Lapsed are the gangs left out of the plan because their reservations lapsed, by gang. Compute
	// leaves it empty: the planner that sets gangs aside fills it.
	Lapsed []Lapse
	guards map[string]*guards
}

// Lapse is a gang whose reservation held free room for too long without the gang starting: it is
// left out of the plans until Until.
type Lapse struct {
	Gang string
	// Since is when its room was first free.
	Since time.Time
	Until time.Time
}

// LapseOf returns the lapse of gang, or nil.
func (p *Plan) LapseOf(gang string) *Lapse {
	if p == nil {
		return nil
	}
	for i := range p.Lapsed {
		if p.Lapsed[i].Gang == gang {
			return &p.Lapsed[i]
		}
	}
	return nil
}

// Compute plans, gang after gang in the order given, the earliest time within the window at which
// the gang's members fit on the nodes beside the pods still running then and the reservations of
// the gangs before it, and where. A gang that cannot start within the window gets no reservation
// and does not hold back the ones after it.
func Compute(dims []v1.ResourceName, nodes []Node, gangs []Gang, s Settings) *Plan {
	p := &Plan{Dims: dims, At: s.Now, Resolution: s.Resolution, guards: map[string]*guards{}}
	if len(gangs) == 0 {
		return p
	}
	t := newTimes(dims, nodes, s)
	for i := range gangs {
		r, ok := t.place(&gangs[i])
		if !ok {
			p.Unplaced = append(p.Unplaced, gangs[i].Key)
			continue
		}
		t.hold(r)
		p.Reservations = append(p.Reservations, r.reservation(nodes))
	}
	p.guard(t)
	return p
}

// Reservation returns the reservation of gang, or nil.
func (p *Plan) Reservation(gang string) *Reservation {
	if p == nil {
		return nil
	}
	for i := range p.Reservations {
		if p.Reservations[i].Gang == gang {
			return &p.Reservations[i]
		}
	}
	return nil
}

// Empty says whether the plan holds no reservation: nothing is guarded.
func (p *Plan) Empty() bool { return p == nil || len(p.Reservations) == 0 }

// Idle says whether the plan considered no gang at all: none holds a reservation, none was found
// no start, none is set aside.
func (p *Plan) Idle() bool {
	return p.Empty() && (p == nil || len(p.Unplaced) == 0 && len(p.Lapsed) == 0)
}

// Reserved is the room the reservations hold, summed, by resource.
func (p *Plan) Reserved() map[v1.ResourceName]int64 {
	out := map[v1.ResourceName]int64{}
	if p == nil {
		return out
	}
	for i := range p.Reservations {
		p.addAmount(out, &p.Reservations[i])
	}
	return out
}

// AmountOf is the room reservation r of the plan holds, summed over its nodes, by resource.
func (p *Plan) AmountOf(r *Reservation) map[v1.ResourceName]int64 {
	out := map[v1.ResourceName]int64{}
	p.addAmount(out, r)
	return out
}

func (p *Plan) addAmount(out map[v1.ResourceName]int64, r *Reservation) {
	for _, share := range r.Nodes {
		for i, x := range share.Amount {
			out[p.Dims[i]] += x
		}
	}
}

// held is a reservation being placed: its start, end and room by node index.
type held struct {
	gang   *Gang
	start  time.Time
	end    time.Time // zero: open-ended
	amount map[int]Vector
}

// holdsAt says whether h holds its room at t.
func (h *held) holdsAt(t time.Time) bool {
	return !h.start.After(t) && (h.end.IsZero() || h.end.After(t))
}

// overlaps says whether h holds its room at some moment of [from, to) (to zero: open-ended).
func (h *held) overlaps(from, to time.Time) bool {
	endsAfter := h.end.IsZero() || h.end.After(from)
	startsBefore := to.IsZero() || h.start.Before(to)
	return endsAfter && startsBefore
}

func (h *held) reservation(nodes []Node) Reservation {
	r := Reservation{Gang: h.gang.Key, Start: h.start, End: h.end}
	for i, amount := range h.amount {
		r.Nodes = append(r.Nodes, Share{Node: nodes[i].Name, Amount: amount})
	}
	slices.SortFunc(r.Nodes, func(a, b Share) int {
		switch {
		case a.Node < b.Node:
			return -1
		case a.Node > b.Node:
			return 1
		}
		return 0
	})
	return r
}
