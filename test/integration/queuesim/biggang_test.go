package queuesim

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/queue-scheduler/queue-scheduler/pkg/queuesim"
)

// gangKey is the big-gang scenario's gang: the first PodGroup of its job stream "big".
const gangKey = queuesim.Namespace + "/big-0"

// playBigGang plays examples/scenarios/big-gang.yaml, with its reservations or without, and returns
// its gang's result and the scenario.
func playBigGang(t *testing.T, reservations bool) (queuesim.GangResult, *queuesim.Scenario) {
	t.Helper()
	s, err := queuesim.Load(filepath.Join("..", "..", "..", "examples", "scenarios", "big-gang.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !reservations {
		s.NoReservations()
	}
	result, err := queuesim.Run(context.Background(), s, queuesim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g, ok := result.Gang(gangKey)
	if !ok {
		t.Fatalf("no gang %s in the result: %+v", gangKey, result.Gangs)
	}
	return g, s
}

// With reservations, the gang of half the cluster starts no later than its first reservation
// promised, plus one scheduling interval: the scheduler's longest retry of a waiting pod (1 s real,
// the scenario's time scale in simulated seconds) and one plan of the reservations, by which the
// room freed is seen and the gang tried. The cluster stays at least 90% busy while it waits: the
// teams' jobs that end in time backfill its room.
func TestBigGangStartsWhenItsReservationSaid(t *testing.T) {
	g, s := playBigGang(t, true)
	interval := time.Duration(s.TimeScale)*time.Second + queuesim.ReplanInterval
	if !g.Reserved || !g.Ran || g.Started > g.FirstReservedStart+interval {
		t.Errorf("gang: reserved %t (first start %s), ran %t at %s: want it to start by %s", g.Reserved, g.FirstReservedStart, g.Ran,
			g.Started, g.FirstReservedStart+interval)
	}
	if g.UtilisationWhileWaiting < 0.9 {
		t.Errorf("utilisation while the gang waited: %.1f%%, want at least 90%%", 100*g.UtilisationWhileWaiting)
	}
}

// Without reservations, the same scenario leaves the gang waiting to the end: the freed cpu is
// taken a core at a time, and no node is ever whole.
func TestBigGangWaitsForEverWithoutReservations(t *testing.T) {
	g, _ := playBigGang(t, false)
	if g.Ran || g.Reserved {
		t.Errorf("gang without reservations: ran %t at %s, reserved %t: want it still waiting at the end", g.Ran, g.Started, g.Reserved)
	}
}
