package queuesim

import (
	"context"
	"fmt"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
)

// LoadSnapshot reads a ForecastSnapshot file, as `kubectl get forecastsnapshot current -o yaml` (or
// -o json) or `queuesim run --snapshot-at` writes it; what replay needs of it is checked, each
// error naming the file and the field.
func LoadSnapshot(path string) (*visibilityv1beta1.ForecastSnapshot, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	snap := &visibilityv1beta1.ForecastSnapshot{}
	if err := yaml.UnmarshalStrict(raw, snap); err != nil {
		return nil, fmt.Errorf("%s: not a ForecastSnapshot: %w", path, err)
	}
	if snap.Kind != "" && snap.Kind != "ForecastSnapshot" {
		return nil, fmt.Errorf("%s: kind: a ForecastSnapshot is needed, got %s", path, snap.Kind)
	}
	if err := checkSnapshot(snap); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return snap, nil
}

// checkSnapshot checks what a replay needs: a time, nodes, and pending work that names its queue
// and asks for some pods.
func checkSnapshot(snap *visibilityv1beta1.ForecastSnapshot) error {
	switch {
	case snap.ForecastTime.IsZero():
		return fmt.Errorf("forecastTime: the moment of the snapshot is needed")
	case len(snap.Nodes) == 0:
		return fmt.Errorf("nodes: a replay needs at least one node")
	}
	for i, n := range snap.Nodes {
		if n.Name == "" || len(n.Allocatable) == 0 {
			return fmt.Errorf("nodes[%d]: a name and what the node offers (allocatable) are needed", i)
		}
	}
	for i, w := range snap.Pending {
		if w.Workload.Name == "" || w.Queue == "" || len(w.Members) == 0 {
			return fmt.Errorf("pending[%d]: a workload name, a queue and at least one member are needed", i)
		}
		for j, m := range w.Members {
			if m.Count < 1 {
				return fmt.Errorf("pending[%d].members[%d].count: must be at least 1, got %d", i, j, m.Count)
			}
		}
	}
	return nil
}

// takeSnapshot reads the scheduler's ForecastSnapshot and returns it in simulated time.
func (sim *simulation) takeSnapshot(ctx context.Context) (*visibilityv1beta1.ForecastSnapshot, error) {
	snap, err := sim.queues.VisibilityV1beta1().ForecastSnapshots().Get(ctx, visibilityv1beta1.CurrentSnapshot, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("read the forecast snapshot: %w", err)
	}
	stretch(snap, sim.clock.scale)
	return snap, nil
}

// stretch turns a snapshot taken on the real clock of a scenario played at scale into simulated
// time: every time's distance from the snapshot's moment, and every duration, scale times as long.
func stretch(snap *visibilityv1beta1.ForecastSnapshot, scale float64) {
	at := snap.ForecastTime.Time
	long := func(d time.Duration) time.Duration { return time.Duration(float64(d) * scale) }
	moment := func(t *metav1.MicroTime) {
		if t != nil {
			t.Time = at.Add(long(t.Sub(at)))
		}
	}
	snap.Resolution.Duration = long(snap.Resolution.Duration)
	for i := range snap.Nodes {
		for j := range snap.Nodes[i].Running {
			moment(snap.Nodes[i].Running[j].EndP50)
			moment(snap.Nodes[i].Running[j].EndP90)
		}
	}
	for i := range snap.Pending {
		w := &snap.Pending[i]
		moment(&w.Since)
		moment(w.Start.P50)
		moment(w.Start.P90)
		w.Runtime.P50.Duration, w.Runtime.P90.Duration = long(w.Runtime.P50.Duration), long(w.Runtime.P90.Duration)
		if w.Bound != nil {
			w.Bound.Duration = long(w.Bound.Duration)
		}
	}
	for i := range snap.Reservations {
		moment(&snap.Reservations[i].Start)
	}
}

// saveSnapshot writes a snapshot as YAML, as kubectl would.
func saveSnapshot(path string, snap *visibilityv1beta1.ForecastSnapshot) error {
	out := snap.DeepCopy()
	out.APIVersion, out.Kind = visibilityv1beta1.SchemeGroupVersion.String(), "ForecastSnapshot"
	raw, err := yaml.Marshal(out)
	if err != nil {
		return err
	}
	return os.WriteFile(path, raw, 0o644)
}

// TakeSnapshots adds moments to take the forecast's snapshot at, each within the scenario.
func (s *Scenario) TakeSnapshots(at []time.Duration) error {
	for _, d := range at {
		if d < 0 || d > s.Duration.Duration {
			return fmt.Errorf("--snapshot-at %s: must be within the scenario's %s", d, s.Duration.Duration)
		}
		s.Snapshots = append(s.Snapshots, Duration{Duration: d})
	}
	return nil
}
