package timeline

import (
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
)

// event is a release on one node, its time rounded up to the resolution.
type event struct {
	at    time.Time
	node  int
	gives Vector
}

// times is the state of one planning: the releases in time order, the times a start is tried at,
// and the reservations made so far.
type times struct {
	dims       int
	now        time.Time
	horizon    time.Time
	resolution time.Duration
	maxFits    int
	nodes      []Node
	events     []event
	candidates []time.Time
	heldOn     map[int][]*held
	// scale weighs each resource in the best fit: one over the most any node has free of it.
	scale []float64
}

func newTimes(dims []v1.ResourceName, nodes []Node, s Settings) *times {
	t := &times{dims: len(dims), now: s.Now, resolution: s.Resolution, maxFits: s.MaxFits, nodes: nodes, heldOn: map[int][]*held{},
		scale: make([]float64, len(dims))}
	t.horizon = s.Now.Add(s.Window)
	for i, n := range nodes {
		for _, r := range n.Releases {
			t.events = append(t.events, event{at: t.releaseAt(r.At), node: i, gives: r.Gives})
		}
		for d, x := range n.Free {
			t.scale[d] = max(t.scale[d], float64(x))
		}
	}
	for d := range t.scale {
		t.scale[d] = 1 / (t.scale[d] + 1)
	}
	slices.SortStableFunc(t.events, func(a, b event) int { return a.at.Compare(b.at) })
	t.candidates = []time.Time{s.Now}
	for _, e := range t.events {
		if e.at.After(t.horizon) {
			break
		}
		if last := t.candidates[len(t.candidates)-1]; e.at.After(last) {
			t.candidates = append(t.candidates, e.at)
		}
	}
	return t
}

// releaseAt is when the plan counts a release due at at: rounded up to the resolution, and no
// earlier than now (a pod past its bound is about to end).
func (t *times) releaseAt(at time.Time) time.Time {
	at = ceil(at, t.resolution)
	if at.Before(t.now) {
		return t.now
	}
	return at
}

// endOf is when a gang that starts at at ends, rounded up to the resolution, and at least a step
// after at; zero when a member has no bound.
func (t *times) endOf(g *Gang, at time.Time) time.Time {
	end := g.end(at)
	if end.IsZero() {
		return end
	}
	if least := at.Add(max(t.resolution, time.Nanosecond)); end.Before(least) {
		end = least
	}
	return ceil(end, t.resolution)
}

// hold counts a reservation made; its end, when within the window, is a time to try the next
// gangs at.
func (t *times) hold(h *held) {
	for n := range h.amount {
		t.heldOn[n] = append(t.heldOn[n], h)
	}
	if h.end.IsZero() || h.end.After(t.horizon) {
		return
	}
	if i, found := slices.BinarySearchFunc(t.candidates, h.end, time.Time.Compare); !found {
		t.candidates = slices.Insert(t.candidates, i, h.end)
	}
}

// sweep is the free room of every node at a moving time, as the releases up to it are applied, and
// for a few shapes of the gang's members how many the eligible nodes hold: counts that no fit can
// beat, kept as the room changes, so that a time the gang cannot start at costs no fit.
type sweep struct {
	t    *times
	free []Vector
	// eligible are the nodes some member may use (nil: all).
	eligible []bool
	// slots are the shapes counted.
	slots []slots
	next  int
}

// slots counts the members of one shape that the eligible nodes hold (held), against how many
// members need one (need): a member that asks for at least the shape in every resource.
type slots struct {
	shape      Vector
	need, held int
}

// newSweep counts two shapes: the least any member asks, per resource, which every member needs;
// and the largest member's, which the members that ask for at least as much need. The first rules
// out times with too few places, the second times with too few large ones.
func (t *times) newSweep(members []Member) *sweep {
	s := &sweep{t: t, free: make([]Vector, len(t.nodes)), eligible: anyEligible(members, len(t.nodes))}
	s.slots = []slots{{shape: smallest(members, t.dims), need: len(members)}}
	if large := members[0].Requests; !large.Fits(s.slots[0].shape) {
		need := 0
		for _, m := range members {
			if large.Fits(m.Requests) {
				need++
			}
		}
		s.slots = append(s.slots, slots{shape: large, need: need})
	}
	for i, n := range t.nodes {
		s.free[i] = n.Free.Clone()
		for k := range s.slots {
			s.slots[k].held += s.slotsOn(k, i, s.free[i])
		}
	}
	return s
}

// smallest is, per resource, the least any member asks.
func smallest(members []Member, dims int) Vector {
	out := make(Vector, dims)
	for i, m := range members {
		for d, x := range m.Requests {
			if i == 0 || x < out[d] {
				out[d] = x
			}
		}
	}
	return out
}

// anyEligible is the nodes some member may use, or nil for all.
func anyEligible(members []Member, nodes int) []bool {
	var out []bool
	for _, m := range members {
		if m.Eligible == nil {
			return nil
		}
		if out == nil {
			out = make([]bool, nodes)
		}
		for n, ok := range m.Eligible {
			out[n] = out[n] || ok
		}
	}
	return out
}

// slotsOn is how many members of shape k room on node n holds; as many as there are when the shape
// asks for nothing.
func (s *sweep) slotsOn(k, n int, room Vector) int {
	if s.eligible != nil && !s.eligible[n] {
		return 0
	}
	held := -1
	for d, x := range s.slots[k].shape {
		if x <= 0 {
			continue
		}
		if c := int(max(room[d], 0) / x); held < 0 || c < held {
			held = c
		}
	}
	if held < 0 {
		return 1 << 30
	}
	return held
}

// to applies the releases up to at.
func (s *sweep) to(at time.Time) {
	for ; s.next < len(s.t.events) && !s.t.events[s.next].at.After(at); s.next++ {
		e := s.t.events[s.next]
		for k := range s.slots {
			s.slots[k].held -= s.slotsOn(k, e.node, s.free[e.node])
		}
		s.free[e.node].Add(e.gives, 1)
		for k := range s.slots {
			s.slots[k].held += s.slotsOn(k, e.node, s.free[e.node])
		}
	}
}

// place finds the earliest candidate time at which the gang's members fit for the whole of its run,
// beside the reservations made, and where; within maxFits fits, when bounded.
func (t *times) place(g *Gang) (*held, bool) {
	members := t.bySize(g.Members)
	s := t.newSweep(members)
	fits := 0
	for _, at := range t.candidates {
		s.to(at)
		end := t.endOf(g, at)
		if !s.enoughBeside(at, end) {
			continue
		}
		if t.maxFits > 0 && fits == t.maxFits {
			return nil, false
		}
		fits++
		if took, ok := t.fit(members, g.Prefer, s.free, s.roomBeside(at, end)); ok {
			return &held{gang: g, start: at, end: end, amount: took}, true
		}
	}
	return nil, false
}

// roomBeside is the free room of the nodes that hold reservations overlapping [from, to), less
// those reservations (conservatively, all of them at once).
func (s *sweep) roomBeside(from, to time.Time) map[int]Vector {
	room := map[int]Vector{}
	for n := range s.t.heldOn {
		if left, held := s.leftBeside(n, from, to, nil); held {
			room[n] = left
		}
	}
	return room
}

// enoughBeside says whether the eligible nodes hold enough members of every shape counted in
// [from, to), beside the reservations made.
func (s *sweep) enoughBeside(from, to time.Time) bool {
	scratch := make(Vector, s.t.dims)
	for k, c := range s.slots {
		held := c.held
		for n := range s.t.heldOn {
			if left, overlaps := s.leftBeside(n, from, to, scratch); overlaps {
				held += s.slotsOn(k, n, left) - s.slotsOn(k, n, s.free[n])
			}
		}
		if held < c.need {
			return false
		}
	}
	return true
}

// leftBeside is node n's free room less the reservations on it that overlap [from, to), into into
// (a new vector when nil); held says whether any does.
func (s *sweep) leftBeside(n int, from, to time.Time, into Vector) (Vector, bool) {
	held := false
	for _, h := range s.t.heldOn[n] {
		if !h.overlaps(from, to) {
			continue
		}
		if !held {
			if into == nil {
				into = make(Vector, s.t.dims)
			}
			copy(into, s.free[n])
			held = true
		}
		into.Add(h.amount[n], -1)
	}
	return into, held
}

// bySize orders members largest first (by their largest part of any resource), so that the best
// fit places the hard ones first.
func (t *times) bySize(members []Member) []Member {
	out := slices.Clone(members)
	size := func(m Member) float64 {
		var most float64
		for d, x := range m.Requests {
			most = max(most, float64(x)*t.scale[d])
		}
		return most
	}
	slices.SortStableFunc(out, func(a, b Member) int {
		sa, sb := size(a), size(b)
		switch {
		case sa > sb:
			return -1
		case sa < sb:
			return 1
		}
		return 0
	})
	return out
}

// fit places each member on the eligible node it leaves the least room on, a preferred one first
// among equals (room overrides free for the nodes it names), and returns what it took of each node.
func (t *times) fit(members []Member, prefer []bool, free []Vector, room map[int]Vector) (map[int]Vector, bool) {
	left := make([]Vector, len(free))
	copy(left, free)
	for n, r := range room {
		left[n] = r
	}
	took := map[int]Vector{}
	for _, m := range members {
		best, bestScore := -1, 0.0
		for n, l := range left {
			if (m.Eligible != nil && !m.Eligible[n]) || !m.Requests.Fits(l) {
				continue
			}
			score := t.leftover(l, m.Requests)
			if best < 0 || score < bestScore || score == bestScore && preferred(prefer, n) && !preferred(prefer, best) {
				best, bestScore = n, score
			}
		}
		if best < 0 {
			return nil, false
		}
		if took[best] == nil {
			took[best] = make(Vector, t.dims)
		}
		took[best].Add(m.Requests, 1)
		left[best] = left[best].Clone()
		left[best].Add(m.Requests, -1)
	}
	return took, true
}

func preferred(prefer []bool, n int) bool { return prefer != nil && prefer[n] }

// leftover weighs the room a member would leave on a node.
func (t *times) leftover(room, req Vector) float64 {
	var sum float64
	for d := range room {
		sum += float64(room[d]-req[d]) * t.scale[d]
	}
	return sum
}
