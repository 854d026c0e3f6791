package queuesim

import (
	"testing"
	"time"

	"github.com/queue-scheduler/queue-scheduler/pkg/queuesim"
)

// known: one node, filled by a pod of 10 minutes that sets no bound, behind which waits a pod of 1
// minute; the snapshot at 2 minutes (6 real seconds) finds the first running and the second
// waiting, however slowly the first is bound.
const known = `
name: known
duration: 2m5s
timeScale: 20
nodes: [{name: node, count: 1, cpu: "4"}]
queues: [{name: a}]
jobs:
- {name: run, queue: a, cpu: "4", runtime: 10m}
- {name: next, queue: a, at: 2s, cpu: "4", runtime: 1m}
snapshots: [2m]
`

// Told to, queuesim tells the scheduler's forecast each pod's runtime, which it plays in place of
// the default hour (and 4 hours at the 90th percentile) it would give work nothing finished of: the
// running pod ends within 10 minutes of the snapshot, at both percentiles, and the pod behind it
// runs a minute.
func TestKnownRuntimesReachTheForecast(t *testing.T) {
	snap := playForSnapshot(t, "known.yaml", known, (*queuesim.Scenario).KnowRuntimes).Snapshots[0].Snapshot
	var ends []time.Duration
	for _, n := range snap.Nodes {
		for _, p := range n.Running {
			if p.EndP50 == nil || p.EndP90 == nil || !p.EndP90.Equal(p.EndP50) {
				t.Fatalf("running pod of %s ends %v / %v, want one end at both", p.Queue, p.EndP50, p.EndP90)
			}
			ends = append(ends, p.EndP50.Sub(snap.ForecastTime.Time))
		}
	}
	// It started before the snapshot, so it ends within its runtime of it, and after it.
	if len(ends) != 1 || ends[0] <= 0 || ends[0] > 10*time.Minute {
		t.Errorf("running pods end in %v from the snapshot, want one, within 10m", ends)
	}
	if len(snap.Pending) != 1 || snap.Pending[0].Runtime.P50.Duration != time.Minute || snap.Pending[0].Runtime.P90.Duration != time.Minute {
		t.Errorf("pending work %+v, want next's pod, running a minute", snap.Pending)
	}
}
