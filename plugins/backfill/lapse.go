package backfill

import (
	"slices"
	"strings"
	"time"

	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/timeline"
)

// lapseMost is how many lapseAfters a gang sits out at most, however often its reservation lapsed:
// a gang held back by something passing (a node NotReady, a port freed late) is planned again soon.
const lapseMost = 8

// lapses let go of reservations whose room is free while their gangs do not start. The plan does
// not model everything that places a pod (pod affinity, topology spread, volumes, ports, claims):
// a gang held back by those would otherwise keep its room idle for ever. A reservation that has
// been due for after lapses; its gang is left out of the plans for after, then twice as long at
// each lapse that follows, up to most. Used under the plugin's lock.
type lapses struct {
	after, most time.Duration
	// due is when each gang's reservation was first found due, as of the last plan.
	due map[string]time.Time
	set map[string]lapse
}

// lapse is a gang set aside: how many times its reservation lapsed, since when it was due the last
// time, and until when the gang is left out.
type lapse struct {
	count        int
	since, until time.Time
}

// setAside says, for the waiting gangs at now, which are left out of the plans.
func (l *lapses) setAside(now time.Time) func(string) bool {
	return func(gang string) bool {
		s, ok := l.set[gang]
		return ok && now.Before(s.until)
	}
}

// apply lets go of the reservations of plan that have been due for l.after, sets their gangs
// aside, and lists in the plan every gang set aside. A lapse whose time is over is forgotten once
// its gang is no longer among the gangs planned.
func (l *lapses) apply(plan *timeline.Plan, gangs []accounting.WaitingGang, now time.Time) *timeline.Plan {
	due := map[string]time.Time{}
	var gone []string
	for i := range plan.Reservations {
		r := &plan.Reservations[i]
		if !r.Due(plan.At) {
			continue
		}
		since, ok := l.due[r.Gang]
		if !ok {
			since = now
		}
		if now.Sub(since) < l.after {
			due[r.Gang] = since
			continue
		}
		gone = append(gone, r.Gang)
		s := l.set[r.Gang]
		s.count++
		s.since, s.until = since, now.Add(l.period(s.count))
		l.set[r.Gang] = s
	}
	l.due = due
	for gang, s := range l.set {
		if !now.Before(s.until) && !slices.ContainsFunc(gangs, func(g accounting.WaitingGang) bool { return g.Key == gang }) {
			delete(l.set, gang)
		}
	}
	if len(gone) > 0 {
		plan = plan.Without(gone)
	}
	plan.Lapsed = nil
	for gang, s := range l.set {
		if now.Before(s.until) {
			plan.Lapsed = append(plan.Lapsed, timeline.Lapse{Gang: gang, Since: s.since, Until: s.until})
		}
	}
	slices.SortFunc(plan.Lapsed, func(a, b timeline.Lapse) int { return strings.Compare(a.Gang, b.Gang) })
	return plan
}

// period is how long a gang is left out at its count-th lapse: after, doubled at each lapse after
// the first, up to most.
func (l *lapses) period(count int) time.Duration {
	d := l.after
	for i := 1; i < count && d < l.most; i++ {
		d *= 2
	}
	return min(d, l.most)
}
