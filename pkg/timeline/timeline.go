// Package timeline plans when the first waiting gangs can start, from when the running pods end at
// the latest (their runtime bounds), and guards the room it sets aside for them: a pod may take
// room a reservation needs only if its own bound ends before the reservation starts. It is pure:
// no informer, lock on shared state, client or clock; the caller hands it the nodes, the gangs in
// the scheduler's order and the time.
package timeline

import (
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/queue-scheduler/queue-scheduler/pkg/podfit"
)

// Vector is an amount of each resource a plan looks at, in the order of the plan's Dims, in the
// units of the scheduler's NodeInfo: milli-cpu, bytes, and whole units of every other resource.
type Vector = podfit.Vector

// Release is a running pod's end at the latest: when its runtime bound ends, and the room it gives
// back then.
type Release struct {
	At    time.Time
	Gives Vector
}

// Node is one node as the plan reads it.
type Node struct {
	Name string
	// Free is the node's allocatable room less what every pod on it requests, assumed pods included.
	Free Vector
	// Releases are the node's pods with a runtime bound. A pod without one holds its room for ever.
	Releases []Release
}

// Member is one member of a gang still to be placed.
type Member struct {
	Requests Vector
	// Eligible says, by index in the nodes handed to Compute, where the member may run (node
	// selector, required affinity, taints); nil is everywhere.
	Eligible []bool
	// Bound is the member's runtime bound.
	Bound Bound
}

// Bound is a runtime bound: a limit counted from the start, and the grace the work takes to stop
// once the limit ends it. The zero Bound is none: the work may run for ever.
type Bound struct {
	// After is the limit (activeDeadlineSeconds); 0 is none.
	After time.Duration
	// Grace is how long the work may take to stop once its limit ends it
	// (terminationGracePeriodSeconds).
	Grace time.Duration
}

// Bounded says whether b ends the work at all.
func (b Bound) Bounded() bool { return b.After > 0 }

// End is when work bounded by b that starts at start is gone at the latest, its grace included;
// zero when never.
func (b Bound) End(start time.Time) time.Time {
	if !b.Bounded() {
		return time.Time{}
	}
	return start.Add(b.After + b.Grace)
}

// Gang is a waiting gang, as the plan reads it.
type Gang struct {
	// Key names the gang ("namespace/podgroup").
	Key string
	// Members are the members that must still be placed for the gang to run.
	Members []Member
	// Prefer marks, by index in the nodes handed to Compute, the nodes to take first among those
	// that fit a member equally well: the gang's last reservation's, so that planning again does
	// not move it for nothing. Nil prefers none.
	Prefer []bool
}

// end is when a gang that starts at start has ended at the latest: its last member's end; zero when
// a member has no bound.
func (g *Gang) end(start time.Time) time.Time {
	var last time.Time
	for _, m := range g.Members {
		end := m.Bound.End(start)
		if end.IsZero() {
			return time.Time{}
		}
		if end.After(last) {
			last = end
		}
	}
	return last
}

// Settings bound the planning.
type Settings struct {
	// Now is the time the plan is made at.
	Now time.Time
	// Window is how far ahead a start is looked for; a gang that cannot start within it gets no
	// reservation.
	Window time.Duration
	// Resolution is the step the ends are rounded up to, so that a plan made a moment later (or by
	// a restarted scheduler) gives the same starts; every reservation lasts at least one step.
	Resolution time.Duration
	// MaxFits bounds the cost of one gang: how many times its members are fitted onto the nodes,
	// at the times the counts of places let through, before it is given up for this plan as
	// unplaced; 0 is no bound.
	MaxFits int
}

// Share is a reservation's room on one node.
type Share struct {
	Node   string
	Amount Vector
}

// Reservation is the room a gang is promised: from Start, on Nodes, until End (zero: open-ended,
// the gang has no runtime bound).
type Reservation struct {
	Gang  string
	Start time.Time
	End   time.Time
	// Nodes are sorted by name.
	Nodes []Share
}

// Due says whether the reservation starts at once: its room is free at the plan's time at.
func (r *Reservation) Due(at time.Time) bool { return !r.Start.After(at) }

// Open says whether the reservation's room is never given back by a bound.
func (r *Reservation) Open() bool { return r.End.IsZero() }

// ceil rounds t up to the next multiple of step since the Unix epoch.
func ceil(t time.Time, step time.Duration) time.Time {
	if step <= 0 {
		return t
	}
	rounded := t.Truncate(step)
	if rounded.Before(t) {
		rounded = rounded.Add(step)
	}
	return rounded
}

// Dims names the resources of a plan's vectors: cpu, memory and pods always, then the others
// requested, sorted.
func Dims(names []v1.ResourceName) []v1.ResourceName {
	out := []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourcePods}
	for _, name := range names {
		if !containsName(out, name) {
			out = append(out, name)
		}
	}
	return out
}

func containsName(names []v1.ResourceName, name v1.ResourceName) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}
