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
	nodes      []Node
	events     []event
	candidates []time.Time
	heldOn     map[int][]*held
	// scale weighs each resource in the best fit: one over the most any node has free of it.
	scale []float64
}

func newTimes(dims []v1.ResourceName, nodes []Node, s Settings) *times {
	t := &times{dims: len(dims), now: s.Now, resolution: s.Resolution, nodes: nodes, heldOn: map[int][]*held{},
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

// sweep is the free room of every node at a moving time, as the releases up to it are applied.
type sweep struct {
	t     *times
	free  []Vector
	total Vector // the sum of each node's free room, counted from 0 (an overcommitted node adds none)
	next  int
}

func (t *times) newSweep() *sweep {
	s := &sweep{t: t, free: make([]Vector, len(t.nodes)), total: make(Vector, t.dims)}
	for i, n := range t.nodes {
		s.free[i] = n.Free.clone()
		s.total.add(positive(s.free[i]), 1)
	}
	return s
}

// to applies the releases up to at.
func (s *sweep) to(at time.Time) {
	for ; s.next < len(s.t.events) && !s.t.events[s.next].at.After(at); s.next++ {
		e := s.t.events[s.next]
		free := s.free[e.node]
		for d, x := range e.gives {
			before := max(free[d], 0)
			free[d] += x
			s.total[d] += max(free[d], 0) - before
		}
	}
}

func positive(v Vector) Vector {
	out := make(Vector, len(v))
	for i, x := range v {
		out[i] = max(x, 0)
	}
	return out
}

// place finds the earliest candidate time at which the gang's members fit for the whole of its run,
// beside the reservations made, and where.
func (t *times) place(g *Gang) (*held, bool) {
	demand := make(Vector, t.dims)
	for _, m := range g.Members {
		demand.add(m.Requests, 1)
	}
	members := t.bySize(g.Members)
	s := t.newSweep()
	for _, at := range t.candidates {
		s.to(at)
		end := t.endOf(g, at)
		room, total := s.roomBeside(at, end)
		if !demand.fits(total) {
			continue
		}
		if took, ok := t.fit(members, s.free, room); ok {
			return &held{gang: g, start: at, end: end, amount: took, priority: g.Priority}, true
		}
	}
	return nil, false
}

// roomBeside is the free room of the nodes that hold reservations overlapping [from, to), less
// those reservations (conservatively, all of them at once), and the total free room with them.
func (s *sweep) roomBeside(from, to time.Time) (map[int]Vector, Vector) {
	room := map[int]Vector{}
	total := s.total.clone()
	for n, list := range s.t.heldOn {
		var left Vector
		for _, h := range list {
			if !h.overlaps(from, to) {
				continue
			}
			if left == nil {
				left = s.free[n].clone()
			}
			left.add(h.amount[n], -1)
		}
		if left != nil {
			room[n] = left
			total.add(positive(s.free[n]), -1)
			total.add(positive(left), 1)
		}
	}
	return room, total
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

// fit places each member on the eligible node it leaves the least room on (room overrides free for
// the nodes it names), and returns what it took of each node.
func (t *times) fit(members []Member, free []Vector, room map[int]Vector) (map[int]Vector, bool) {
	took := map[int]Vector{}
	left := func(n int) Vector {
		base := free[n]
		if r, ok := room[n]; ok {
			base = r
		}
		if used, ok := took[n]; ok {
			base = base.clone()
			base.add(used, -1)
		}
		return base
	}
	for _, m := range members {
		best, bestScore := -1, 0.0
		for n := range t.nodes {
			if m.Eligible != nil && !m.Eligible[n] {
				continue
			}
			l := left(n)
			if !m.Requests.fits(l) {
				continue
			}
			score := t.leftover(l, m.Requests)
			if best < 0 || score < bestScore {
				best, bestScore = n, score
			}
		}
		if best < 0 {
			return nil, false
		}
		if took[best] == nil {
			took[best] = make(Vector, t.dims)
		}
		took[best].add(m.Requests, 1)
	}
	return took, true
}

// leftover weighs the room a member would leave on a node.
func (t *times) leftover(room, req Vector) float64 {
	var sum float64
	for d := range room {
		sum += float64(room[d]-req[d]) * t.scale[d]
	}
	return sum
}
