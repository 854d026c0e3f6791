package queuesim

import (
	"context"
	"testing"
	"time"

	"github.com/queue-scheduler/queue-scheduler/pkg/queuesim"
)

// known: one node, filled by a pod of 3 minutes that sets no bound, behind which waits a pod of 1
// minute.
const known = `
name: known
duration: 12s
timeScale: 20
nodes: [{name: node, count: 1, cpu: "4"}]
queues: [{name: a}]
jobs:
- {name: run, queue: a, cpu: "4", runtime: 3m}
- {name: next, queue: a, at: 2s, cpu: "4", runtime: 1m}
snapshots: [10s]
`

// Told to, queuesim tells the scheduler's forecast each pod's runtime, which it plays in place of
// the default hour it would give work nothing finished of: the running pod ends 3 minutes after it
// started, and the pod behind it runs a minute.
func TestKnownRuntimesReachTheForecast(t *testing.T) {
	s, err := queuesim.Parse("known.yaml", []byte(known))
	if err != nil {
		t.Fatal(err)
	}
	s.KnowRuntimes()
	played, err := queuesim.Run(context.Background(), s, queuesim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(played.Snapshots) != 1 {
		t.Fatalf("snapshots taken: %d, want 1", len(played.Snapshots))
	}
	snap := played.Snapshots[0].Snapshot
	var ends []time.Duration
	for _, n := range snap.Nodes {
		for _, p := range n.Running {
			if p.EndP50 == nil || p.EndP90 == nil || !p.EndP90.Equal(p.EndP50) {
				t.Fatalf("running pod of %s ends %v / %v, want one end at both", p.Queue, p.EndP50, p.EndP90)
			}
			ends = append(ends, p.EndP50.Sub(snap.ForecastTime.Time))
		}
	}
	// It started within the scenario's first seconds, and ran for up to 10 of them by the snapshot.
	if len(ends) != 1 || ends[0] < 2*time.Minute+30*time.Second || ends[0] > 3*time.Minute {
		t.Errorf("running pods end in %v from the snapshot, want one, in 2m30s to 3m", ends)
	}
	if len(snap.Pending) != 1 || snap.Pending[0].Runtime.P50.Duration != time.Minute || snap.Pending[0].Runtime.P90.Duration != time.Minute {
		t.Errorf("pending work %+v, want next's pod, running a minute", snap.Pending)
	}
}
