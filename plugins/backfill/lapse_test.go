package backfill

import (
	"testing"
	"time"

	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/timeline"
)

// A reservation whose room has been free for lapseAfter without its gang starting lapses: the gang
// is left out for lapseAfter, twice as long at the next lapse, up to the window; a gang that starts
// in time keeps its reservation.
func TestReservationsLapseWhenTheirGangsDoNotStart(t *testing.T) {
	l := &lapses{after: time.Minute, most: 3 * time.Minute, set: map[string]lapse{}}
	dims := timeline.Dims(nil)
	gang := timeline.Gang{Key: "ns/g", Members: []timeline.Member{{Requests: timeline.Vector{1000, 0, 1}}}}
	waiting := []accounting.WaitingGang{{Key: "ns/g"}}
	plan := func(at time.Time) *timeline.Plan {
		nodes := []timeline.Node{{Name: "a", Free: timeline.Vector{8000, 1 << 30, 110}}}
		return timeline.Compute(dims, nodes, []timeline.Gang{gang}, timeline.Settings{Now: at, Window: time.Hour, Resolution: time.Second})
	}
	// step plans at at, unless the gang is set aside then, as aside says; a plan made holds the gang's
	// reservation as reserved says, and its lapse until until (zero: none).
	step := func(at time.Time, aside, reserved bool, until time.Time) {
		t.Helper()
		if got := l.setAside(at)("ns/g"); got != aside || aside {
			if got != aside {
				t.Fatalf("at %v: set aside %v, want %v", at.Sub(now), got, aside)
			}
			return
		}
		p := l.apply(plan(at), waiting, at)
		if got := p.Reservation("ns/g") != nil; got != reserved {
			t.Fatalf("at %v: reserved %v, want %v", at.Sub(now), got, reserved)
		}
		lapsed := p.LapseOf("ns/g")
		switch {
		case until.IsZero() && lapsed != nil:
			t.Fatalf("at %v: lapsed %+v, want none", at.Sub(now), lapsed)
		case !until.IsZero() && (lapsed == nil || !lapsed.Until.Equal(until)):
			t.Fatalf("at %v: lapsed %+v, want until %v", at.Sub(now), lapsed, until.Sub(now))
		}
	}
	none := time.Time{}
	step(now, false, true, none)
	step(now.Add(59*time.Second), false, true, none)
	step(now.Add(time.Minute), false, false, now.Add(2*time.Minute)) // first lapse: left out 1m
	step(now.Add(90*time.Second), true, false, none)
	step(now.Add(2*time.Minute), false, true, none)                    // planned again, due from now
	step(now.Add(3*time.Minute), false, false, now.Add(5*time.Minute)) // second lapse: 2m
	step(now.Add(5*time.Minute), false, true, none)
	step(now.Add(6*time.Minute), false, false, now.Add(9*time.Minute)) // third: 4m, at most 3m
	if p := l.apply(plan(now.Add(9*time.Minute)), nil, now.Add(9*time.Minute)); p.LapseOf("ns/g") != nil || len(l.set) != 0 {
		t.Fatalf("a lapse over, its gang no longer waiting: %+v, %v; want it forgotten", p.Lapsed, l.set)
	}
}
