package timeline

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

var (
	dims = Dims(nil) // cpu, memory, pods
	now  = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	step = 10 * time.Second
)

func cpu(milli int64) Vector { return Vector{milli, 0, 1} }

func settings() Settings { return Settings{Now: now, Window: time.Hour, Resolution: step} }

// node is a node of 8 cpu and 110 pods, with pods of 1 cpu ending at the given offsets from now (0:
// never).
func node(name string, ends ...time.Duration) Node {
	n := Node{Name: name, Free: Vector{8000, 1 << 40, 110}}
	for _, e := range ends {
		n.Free.Add(cpu(1000), -1)
		if e > 0 {
			n.Releases = append(n.Releases, Release{At: now.Add(e), Gives: cpu(1000)})
		}
	}
	return n
}

func gang(key string, members int, milli int64, bound time.Duration) Gang {
	g := Gang{Key: key}
	for range members {
		g.Members = append(g.Members, Member{Requests: cpu(milli), Bound: Bound{After: bound}})
	}
	return g
}

// full is the ends of a full node's eight pods, all at d.
func full(d time.Duration) []time.Duration {
	out := make([]time.Duration, 8)
	for i := range out {
		out[i] = d
	}
	return out
}

func TestGangThatFitsStartsNow(t *testing.T) {
	p := Compute(dims, []Node{node("a"), node("b", full(0)...)}, []Gang{gang("ns/g", 2, 4000, 0)}, settings())
	r := p.Reservation("ns/g")
	if r == nil || !r.Start.Equal(now) || len(r.Nodes) != 1 || r.Nodes[0].Node != "a" || !r.Open() {
		t.Fatalf("reservation %+v, want one from now on node a, open-ended", r)
	}
}

func TestGangStartsWhenTheBoundsFreeItsRoom(t *testing.T) {
	// a frees all 8 cpu by 7m (rounded up to 7m10s), b frees 4 at 2m and the rest never.
	a := node("a", 3*time.Minute, 5*time.Minute, 7*time.Minute+time.Second, time.Minute, time.Minute, time.Minute, time.Minute, time.Minute)
	b := node("b", 2*time.Minute, 2*time.Minute, 2*time.Minute, 2*time.Minute, 0, 0, 0, 0)
	p := Compute(dims, []Node{a, b}, []Gang{gang("ns/big", 1, 8000, 10*time.Minute), gang("ns/small", 1, 4000, 0)}, settings())
	big := p.Reservation("ns/big")
	want := now.Add(7*time.Minute + step)
	if big == nil || !big.Start.Equal(want) || !big.End.Equal(want.Add(10*time.Minute)) || big.Nodes[0].Node != "a" {
		t.Fatalf("big %+v, want a from %v for 10m", big, want)
	}
	small := p.Reservation("ns/small")
	if small == nil || !small.Start.Equal(now.Add(2*time.Minute)) || small.Nodes[0].Node != "b" {
		t.Fatalf("small %+v, want b from 2m", small)
	}
	// A pod on a ending before big's start may take its room; one ending after may not, nor one
	// without a bound, whatever its priority; its own gang may.
	if g := p.Blocking("a", Pod{Requests: cpu(1000), End: want}); g != nil {
		t.Errorf("a pod ending at the start was refused by %+v", g)
	}
	if g := p.Blocking("a", Pod{Requests: cpu(1000), End: want.Add(time.Second)}); g == nil || g.Gang != "ns/big" {
		t.Errorf("a pod ending after the start was let in (%+v)", g)
	}
	if g := p.Blocking("a", Pod{Requests: cpu(1000)}); g == nil {
		t.Error("a pod without a bound was let in")
	}
	if g := p.Blocking("a", Pod{Requests: cpu(8000), Gang: "ns/big"}); g != nil {
		t.Errorf("the gang's own pod was refused by %+v", g)
	}
	if g := p.Blocking("c", Pod{Requests: cpu(1000)}); g != nil {
		t.Errorf("a node without reservations refused a pod: %+v", g)
	}
}

func TestRoomBeyondTheReservationIsFree(t *testing.T) {
	// The gang needs 4 of a's 8 cpu from 1m: a pod without a bound fits in the other 4, not in 5.
	a := node("a", full(time.Minute)...)
	p := Compute(dims, []Node{a}, []Gang{gang("ns/g", 1, 4000, 0)}, settings())
	if g := p.Blocking("a", Pod{Requests: cpu(4000)}); g != nil {
		t.Fatalf("4 cpu beyond the reservation refused: %+v", g)
	}
	if g := p.Blocking("a", Pod{Requests: cpu(5000)}); g == nil {
		t.Fatal("5 cpu let in where 4 are spare")
	}
	p.Take("a", Pod{Requests: cpu(3000)}, 1)
	if g := p.Blocking("a", Pod{Requests: cpu(2000)}); g == nil {
		t.Fatal("2 cpu let in once 3 of the 4 spare were taken")
	}
	p.Take("a", Pod{Requests: cpu(3000)}, -1)
	if g := p.Blocking("a", Pod{Requests: cpu(4000)}); g != nil {
		t.Fatalf("4 cpu refused once the taken 3 were given back: %+v", g)
	}
	// A pod that ends before the start takes nothing from the guard.
	p.Take("a", Pod{Requests: cpu(8000), End: now.Add(30 * time.Second)}, 1)
	if g := p.Blocking("a", Pod{Requests: cpu(4000)}); g != nil {
		t.Fatalf("a pod ending before the start counted against the guard: %+v", g)
	}
}

func TestGangBeyondTheWindowHoldsNothing(t *testing.T) {
	a := node("a", full(2*time.Hour)...)
	p := Compute(dims, []Node{a, node("b")}, []Gang{gang("ns/late", 2, 8000, 0), gang("ns/next", 1, 8000, 0)}, settings())
	if p.Reservation("ns/late") != nil || len(p.Unplaced) != 1 || p.Unplaced[0] != "ns/late" {
		t.Fatalf("reservations %+v, unplaced %v: want ns/late unplaced", p.Reservations, p.Unplaced)
	}
	if r := p.Reservation("ns/next"); r == nil || !r.Start.Equal(now) {
		t.Fatalf("the gang after an unplaced one got %+v, want a start now", r)
	}
}

func TestLaterGangsPlanAroundEarlierOnes(t *testing.T) {
	// One node, free from 1m. The first gang holds all of it for 10m; the second starts after it.
	a := node("a", full(time.Minute)...)
	p := Compute(dims, []Node{a}, []Gang{gang("ns/one", 1, 8000, 10*time.Minute), gang("ns/two", 1, 8000, time.Minute)}, settings())
	one, two := p.Reservation("ns/one"), p.Reservation("ns/two")
	if one == nil || two == nil || !two.Start.Equal(one.End) {
		t.Fatalf("one %+v two %+v: want two to start when one ends", one, two)
	}
	// An open-ended first gang leaves nothing after it.
	p = Compute(dims, []Node{a}, []Gang{gang("ns/one", 1, 8000, 0), gang("ns/two", 1, 8000, time.Minute)}, settings())
	if p.Reservation("ns/two") != nil {
		t.Fatalf("a gang planned after an open-ended one on the same room: %+v", p.Reservations)
	}
}

func TestMembersGoOnlyWhereEligible(t *testing.T) {
	g := gang("ns/g", 1, 1000, 0)
	g.Members[0].Eligible = []bool{false, true}
	p := Compute(dims, []Node{node("a"), node("b", full(5*time.Minute)...)}, []Gang{g}, settings())
	if r := p.Reservation("ns/g"); r == nil || r.Nodes[0].Node != "b" || !r.Start.Equal(now.Add(5*time.Minute)) {
		t.Fatalf("reservation %+v, want b from 5m", r)
	}
}

func TestBoundEnd(t *testing.T) {
	for _, c := range []struct {
		b    Bound
		want time.Time
	}{
		{Bound{}, time.Time{}},
		{Bound{Grace: time.Minute}, time.Time{}},
		{Bound{After: time.Minute}, now.Add(time.Minute)},
		{Bound{After: time.Minute, Grace: 30 * time.Second}, now.Add(90 * time.Second)},
	} {
		if got := c.b.End(now); !got.Equal(c.want) {
			t.Errorf("%+v.End(now) = %v, want %v", c.b, got, c.want)
		}
	}
}

// TestNothingLetInDelaysAReservation plays random clusters, gangs and pods: every pod Blocking lets
// in is taken, and then at every reservation's start, on each of its nodes, the pods still running
// and the reservations holding room then fit in the node. A plan made again with those pods gives
// no later starts.
func TestNothingLetInDelaysAReservation(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 33))
	for c := range 300 {
		nodes := make([]Node, 2+rng.IntN(6))
		for i := range nodes {
			var ends []time.Duration
			for range rng.IntN(9) {
				ends = append(ends, time.Duration(rng.IntN(40))*time.Minute) // 0: never
			}
			nodes[i] = node(fmt.Sprintf("n%d", i), ends...)
		}
		var gangs []Gang
		for g := range 1 + rng.IntN(3) {
			gangs = append(gangs, gang(fmt.Sprintf("ns/g%d", g), 1+rng.IntN(4), int64(1+rng.IntN(6))*1000, time.Duration(rng.IntN(30))*time.Minute))
		}
		p := Compute(dims, nodes, gangs, settings())
		type pod struct {
			node string
			req  Vector
			end  time.Time
		}
		var taken []pod
		for range 40 {
			n := nodes[rng.IntN(len(nodes))].Name
			req := cpu(int64(1+rng.IntN(4)) * 1000)
			var end time.Time
			if rng.IntN(3) > 0 {
				end = now.Add(time.Duration(rng.IntN(50)) * time.Minute)
			}
			if p.Blocking(n, Pod{Requests: req, End: end}) == nil {
				p.Take(n, Pod{Requests: req, End: end}, 1)
				taken = append(taken, pod{n, req, end})
			}
		}
		for _, r := range p.Reservations {
			for _, share := range r.Nodes {
				var n Node
				for _, x := range nodes {
					if x.Name == share.Node {
						n = x
					}
				}
				room := n.Free.Clone()
				for _, rel := range n.Releases {
					if !ceil(rel.At, step).After(r.Start) {
						room.Add(rel.Gives, 1)
					}
				}
				for _, other := range p.Reservations {
					if !other.Start.After(r.Start) && (other.Open() || other.End.After(r.Start)) {
						for _, s := range other.Nodes {
							if s.Node == share.Node {
								room.Add(s.Amount, -1)
							}
						}
					}
				}
				for _, x := range taken {
					if x.node == share.Node && !endsBy(x.end, r.Start) {
						room.Add(x.req, -1)
					}
				}
				if room[0] < 0 {
					t.Fatalf("case %d: at %v node %s is short by %d milli-cpu of what the reservations hold", c, r.Start, share.Node, -room[0])
				}
			}
		}
	}
}

func TestWithoutGivesTheRoomBack(t *testing.T) {
	// One node free from 1m; two gangs of 4 cpu without a bound share it from then.
	a := node("a", full(time.Minute)...)
	p := Compute(dims, []Node{a}, []Gang{gang("ns/one", 1, 4000, 0), gang("ns/two", 1, 4000, 0)}, settings())
	if len(p.Reservations) != 2 {
		t.Fatalf("reservations %+v, want two", p.Reservations)
	}
	if g := p.Blocking("a", Pod{Requests: cpu(1000)}); g == nil {
		t.Fatal("a pod without a bound let in while both reservations hold the node")
	}
	q := p.Without([]string{"ns/one"})
	if q.Reservation("ns/one") != nil || q.Reservation("ns/two") == nil {
		t.Fatalf("reservations %+v, want two's only", q.Reservations)
	}
	if g := q.Blocking("a", Pod{Requests: cpu(4000)}); g != nil {
		t.Fatalf("4 cpu refused once one's 4 were given back: %+v", g)
	}
	if g := q.Blocking("a", Pod{Requests: cpu(5000)}); g == nil || g.Gang != "ns/two" {
		t.Fatalf("5 cpu let in where two still holds 4 of 8 (%+v)", g)
	}
	if g := p.Blocking("a", Pod{Requests: cpu(1000)}); g == nil {
		t.Fatal("Without changed the plan it was made from")
	}
	if q.Without([]string{"ns/two"}).Blocking("a", Pod{Requests: cpu(8000)}) != nil {
		t.Fatal("a node with no reservation left refused a pod")
	}
}

// A gang's own members take the gang's share of a node first, and then only the spare: a small
// member cannot take the room the plan kept for a large one beyond that.
func TestOwnMembersTakeTheirShareFirst(t *testing.T) {
	g := Gang{Key: "ns/g", Members: []Member{{Requests: cpu(6000)}, {Requests: cpu(2000)}}}
	p := Compute(dims, []Node{node("a", full(time.Minute)...)}, []Gang{g}, settings())
	own := func(milli int64) Pod { return Pod{Requests: cpu(milli), Gang: "ns/g"} }
	p.Take("a", own(2000), 1)
	if guard := p.Blocking("a", own(6000)); guard != nil {
		t.Fatalf("the large member refused after the small one took its 2: %+v", guard)
	}
	if guard := p.Blocking("a", Pod{Requests: cpu(1000)}); guard == nil {
		t.Fatal("a stranger let into the gang's share")
	}
	p.Take("a", own(6000), 1)
	if guard := p.Blocking("a", own(1000)); guard == nil {
		t.Fatal("a third member let in beyond the gang's share of 8 with no spare")
	}
	p.Take("a", own(6000), -1)
	if guard := p.Blocking("a", own(6000)); guard != nil {
		t.Fatalf("the large member refused once it gave its room back: %+v", guard)
	}
}

// A pod's end is rounded up to the resolution, as the plan rounds the running pods' ends: one that
// ends a moment after a step before the start is let in only if that step is by the start.
func TestPodEndsAreRoundedLikeThePlans(t *testing.T) {
	p := Compute(dims, []Node{node("a", full(time.Minute+time.Second)...)}, []Gang{gang("ns/g", 1, 8000, 0)}, settings())
	start := p.Reservation("ns/g").Start
	if !start.Equal(now.Add(time.Minute + step)) {
		t.Fatalf("start %v, want the end rounded up to %v", start, now.Add(time.Minute+step))
	}
	if guard := p.Blocking("a", Pod{Requests: cpu(1000), End: start.Add(-time.Second)}); guard != nil {
		t.Errorf("a pod gone a second before the start refused: %+v", guard)
	}
	if guard := p.Blocking("a", Pod{Requests: cpu(1000), End: start.Add(time.Nanosecond)}); guard == nil {
		t.Error("a pod gone a moment after the start let in")
	}
}

// A reservation lasts at least a step, even when its gang's bound is shorter, and its end is on the
// resolution's grid.
func TestReservationsLastAtLeastAStep(t *testing.T) {
	past := Gang{Key: "ns/late", Members: []Member{{Requests: cpu(8000), Bound: Bound{After: time.Nanosecond}}}}
	p := Compute(dims, []Node{node("a")}, []Gang{past}, settings())
	r := p.Reservation("ns/late")
	if r == nil || !r.End.Equal(now.Add(step)) {
		t.Fatalf("reservation %+v, want one until %v", r, now.Add(step))
	}
	if guard := p.Blocking("a", Pod{Requests: cpu(1000)}); guard == nil {
		t.Error("a pod without a bound let onto the room of a reservation whose gang's bound is short")
	}
}

// Among nodes that fit a member equally well, the gang keeps the ones it was last given: planning
// again moves a reservation only for a better fit or an earlier start.
func TestReservationKeepsItsNodesAmongEquals(t *testing.T) {
	nodes := []Node{node("a", full(time.Minute)...), node("b", full(time.Minute)...), node("c", full(time.Minute)...)}
	g := gang("ns/g", 2, 8000, 0)
	if r := Compute(dims, nodes, []Gang{g}, settings()).Reservation("ns/g"); r == nil || r.Nodes[0].Node != "a" || r.Nodes[1].Node != "b" {
		t.Fatalf("reservation %+v, want a and b (the first equals)", r)
	}
	g.Prefer = []bool{false, true, true}
	r := Compute(dims, nodes, []Gang{g}, settings()).Reservation("ns/g")
	if r == nil || r.Nodes[0].Node != "b" || r.Nodes[1].Node != "c" || !r.Start.Equal(now.Add(time.Minute)) {
		t.Fatalf("reservation %+v, want b and c, the nodes preferred, from 1m", r)
	}
	// An earlier start wins over the preference: c frees its room later.
	nodes[2] = node("c", full(2*time.Minute)...)
	if r := Compute(dims, nodes, []Gang{g}, settings()).Reservation("ns/g"); r == nil || r.Nodes[0].Node != "a" || r.Nodes[1].Node != "b" {
		t.Fatalf("reservation %+v, want a and b from 1m, the earliest start", r)
	}
}

// A gang's cost is bounded: the counts of places rule out the times with too few large places, and
// a gang that still fails maxFits fits is given up for this plan.
func TestAGangsCostIsBounded(t *testing.T) {
	// One member of 6 cpu and two of 3: a (6 free) and b (5 free) hold places enough of each shape,
	// but not all three members; c frees 0.1 cpu every 10s, and 3 cpu after 5 minutes.
	mixed := Gang{Key: "ns/mixed", Members: []Member{{Requests: cpu(6000)}, {Requests: cpu(3000)}, {Requests: cpu(3000)}}}
	c := Node{Name: "c", Free: Vector{0, 0, 110}}
	for i := 1; i <= 30; i++ {
		c.Releases = append(c.Releases, Release{At: now.Add(time.Duration(i) * step), Gives: cpu(100)})
	}
	nodes := []Node{{Name: "a", Free: Vector{6000, 0, 110}}, {Name: "b", Free: Vector{5000, 0, 110}}, c}
	if r := Compute(dims, nodes, []Gang{mixed}, settings()).Reservation("ns/mixed"); r == nil || !r.Start.Equal(now.Add(5*time.Minute)) {
		t.Fatalf("unbounded: reservation %+v, want one from 5m", r)
	}
	bounded := settings()
	bounded.MaxFits = 5
	if p := Compute(dims, nodes, []Gang{mixed}, bounded); p.Reservation("ns/mixed") != nil || len(p.Unplaced) != 1 {
		t.Fatalf("5 fits: reservations %+v, unplaced %v; want the gang given up", p.Reservations, p.Unplaced)
	}
	// Many members of 8 cpu and a tiny one: the large members' count rules out every time before
	// the room is there, so no fit is tried before 5m even with a single one allowed.
	lopsided := gang("ns/lopsided", 2, 8000, 0)
	lopsided.Members = append(lopsided.Members, Member{Requests: cpu(1)})
	many := []Node{node("x", full(5*time.Minute)...), node("y", full(5*time.Minute)...), {Name: "z", Free: Vector{7000, 0, 110}, Releases: c.Releases}}
	bounded.MaxFits = 1
	if r := Compute(dims, many, []Gang{lopsided}, bounded).Reservation("ns/lopsided"); r == nil || !r.Start.Equal(now.Add(5*time.Minute)) {
		t.Fatalf("lopsided: reservation %+v, want one from 5m at the first fit", r)
	}
}
