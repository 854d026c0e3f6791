package queuesim

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/queue-scheduler/queue-scheduler/pkg/queuesim"
)

// fidelity: three queues capped at 4 cpu, each running a pod of 4 cpu bound to end at 1, 2 and 3
// minutes; behind each waits one piece of work, a gang in c, which its queue's cap holds until the
// running pod ends. Only one piece waits in each queue: their order is not the scheduler's retries'
// to choose.
const fidelity = `
name: fidelity
duration: 20s
timeScale: 20
nodes: [{name: node, count: 2, cpu: "8"}]
queues:
- {name: a, capability: {cpu: "4"}}
- {name: b, capability: {cpu: "4"}}
- {name: c, capability: {cpu: "4"}}
jobs:
- {name: a-run, queue: a, cpu: "4", runtime: 2m, deadline: 2m}
- {name: b-run, queue: b, cpu: "4", runtime: 3m, deadline: 3m}
- {name: c-run, queue: c, cpu: "4", runtime: 1m, deadline: 1m}
- {name: a-next, queue: a, at: 5s, cpu: "4", runtime: 2m, deadline: 2m}
- {name: b-next, queue: b, at: 5s, cpu: "4", runtime: 2m, deadline: 2m}
- {name: c-gang, queue: c, kind: Gang, at: 5s, pods: 2, cpu: "2", runtime: 2m, deadline: 2m}
snapshots: [20s]
`

// A scenario's snapshot, saved and replayed with the real scheduler, shows each piece of pending
// work start when the snapshot's forecast said, to within a scheduling interval: a real second (the
// time scale in simulated seconds; the scheduler's longest backoff, 10 simulated seconds, within it)
// and the forecast's resolution.
func TestReplayOfASnapshotStartsTheWorkWhenItsForecastSaid(t *testing.T) {
	played := playForSnapshot(t, "fidelity.yaml", fidelity, nil)
	dir := t.TempDir()
	if err := played.Save(dir); err != nil {
		t.Fatal(err)
	}
	snap, err := queuesim.LoadSnapshot(filepath.Join(dir, played.Snapshots[0].File()))
	if err != nil {
		t.Fatal(err)
	}
	// Each piece is expected to start when the running pod of its queue ends, as the snapshot
	// itself says, to within the step ends are rounded up to.
	ends := map[string]time.Time{}
	for _, n := range snap.Nodes {
		for _, p := range n.Running {
			if p.EndP50 != nil {
				ends[p.Queue] = p.EndP50.Time
			}
		}
	}
	queueOf := map[string]string{"c-gang-0": "c", "a-next-0-0": "a", "b-next-0-0": "b"}
	expected := map[string]time.Time{}
	for _, w := range snap.Pending {
		if w.Start.P50 != nil {
			expected[w.Workload.Name] = w.Start.P50.Time
		}
	}
	if len(expected) != len(queueOf) || len(ends) != 3 {
		t.Fatalf("expected starts in the snapshot %v, running pods' ends %v: want a start for each of %v", expected, ends, queueOf)
	}
	for name, queue := range queueOf {
		start, ok := expected[name]
		if end := ends[queue]; !ok || start.Before(end.Add(-time.Millisecond)) || start.After(end.Add(snap.Resolution.Duration+time.Millisecond)) {
			t.Fatalf("%s expected at %v, want when queue %s's running pod ends (%v), to within %s", name, start, queue, end, snap.Resolution.Duration)
		}
	}
	const scale = 20
	replayed, err := queuesim.Replay(context.Background(), snap, queuesim.ReplayOptions{TimeScale: scale, Duration: 4 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	f := replayed.Forecasts
	interval := scale*time.Second + snap.Resolution.Duration
	if f == nil || f.Compared != 3 || f.P90Error > interval {
		t.Fatalf("replay: %+v; want the 3 expected starts compared, each within %s", f, interval)
	}
	t.Logf("replay: %d compared, error p50 %s, p90 %s", f.Compared, f.MedianError, f.P90Error)
}

// playForSnapshot plays the scenario text (as if read from file), as tune sets it (nil: as it is),
// and returns what it played, which took one snapshot of the forecast.
func playForSnapshot(t *testing.T, file, text string, tune func(*queuesim.Scenario)) *queuesim.Result {
	t.Helper()
	s, err := queuesim.Parse(file, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if tune != nil {
		tune(s)
	}
	played, err := queuesim.Run(context.Background(), s, queuesim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(played.Snapshots) != 1 {
		t.Fatalf("snapshots taken: %d, want 1", len(played.Snapshots))
	}
	return played
}
