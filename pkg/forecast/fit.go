package forecast

import (
	"slices"
	"time"
)

// fit places each member of work starting at now, largest first, on the eligible node it leaves the
// least room on, beside the reservations it may not take; it returns the node of each member in the
// members' order; nothing is taken when one does not fit.
func (w *world) fit(work *Work, now time.Time) ([]int, bool) {
	members := work.Members
	var end time.Time
	if work.Bound > 0 {
		end = w.rounded(now.Add(work.Bound))
	}
	order := make([]int, len(members))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return sumOf(members[b].Requests) - sumOf(members[a].Requests) })
	placed := make([]int, len(members))
	taken := 0
	for _, i := range order {
		best := w.bestNode(members[i], work.Key, end)
		if best < 0 {
			for _, j := range order[:taken] {
				w.free[placed[j]].Add(members[j].Requests, 1)
			}
			return nil, false
		}
		placed[i] = best
		w.free[best].Add(members[i].Requests, -1)
		taken++
	}
	// start takes the room again, as it records the run's ends.
	for i, m := range members {
		w.free[placed[i]].Add(m.Requests, 1)
	}
	return placed, true
}

// bestNode is the eligible node with room for m that it leaves the least room on, or -1: the room
// of work of key, gone by end (zero: never), beside the reservations it may not take.
func (w *world) bestNode(m Member, key string, end time.Time) int {
	best, bestLeft := -1, 0
	for n := range w.free {
		if w.s.Nodes[n].Cordoned || m.Eligible != nil && !m.Eligible[n] {
			continue
		}
		free := w.roomFor(n, key, end)
		if !m.Requests.Fits(free) {
			continue
		}
		if left := sumOf(free) - sumOf(m.Requests); best < 0 || left < bestLeft {
			best, bestLeft = n, left
		}
	}
	return best
}

// sumOf weighs a vector for the best fit: its cpu, in milli-cpu, as the scheduler's most contended
// resource; ties fall to the node order.
func sumOf(v Vector) int {
	if len(v) == 0 {
		return 0
	}
	return int(v[0])
}

// total is what members ask for together.
func total(members []Member) Vector {
	var out Vector
	for _, m := range members {
		if out == nil {
			out = make(Vector, len(m.Requests))
		}
		out.Add(m.Requests, 1)
	}
	return out
}
