package queuesim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
)

var snapAt = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

func at(d time.Duration) *metav1.MicroTime { return ptr.To(metav1.NewMicroTime(snapAt.Add(d))) }

func cpu(n string) v1.ResourceList { return v1.ResourceList{v1.ResourceCPU: resource.MustParse(n)} }

// testSnapshot: one node running a pod of team-a until 2m; a gang of team-b expected at 2m, then a
// pod of team-a at high priority expected at once, and a QueueUnit expected at 7m.
func testSnapshot() *visibilityv1beta1.ForecastSnapshot {
	work := func(kind visibilityv1beta1.WorkloadKind, name, queue string, priority int32, start time.Duration, members ...visibilityv1beta1.SnapshotMembers) visibilityv1beta1.SnapshotWork {
		return visibilityv1beta1.SnapshotWork{Workload: visibilityv1beta1.WorkloadReference{Kind: kind, Name: name}, Namespace: "ns", Queue: queue,
			Priority: priority, Since: metav1.NewMicroTime(snapAt.Add(-time.Minute)), Members: members,
			Runtime: visibilityv1beta1.RuntimeEstimate{P50: metav1.Duration{Duration: 5 * time.Minute}, P90: metav1.Duration{Duration: 20 * time.Minute}},
			Start:   visibilityv1beta1.SnapshotStart{P50: at(start), P90: at(4 * start)}}
	}
	return &visibilityv1beta1.ForecastSnapshot{ForecastTime: metav1.NewMicroTime(snapAt), Resolution: metav1.Duration{Duration: 10 * time.Second},
		Resources: []v1.ResourceName{v1.ResourceCPU},
		Nodes: []visibilityv1beta1.SnapshotNode{{Name: "n", Allocatable: cpu("8"),
			Running: []visibilityv1beta1.SnapshotPod{{Queue: "team-a", Requests: cpu("4"), EndP50: at(2*time.Minute + 300*time.Millisecond), EndP90: at(8 * time.Minute)}}}},
		Queues: []visibilityv1beta1.SnapshotQueue{{Name: "root", Weight: 1}, {Name: "default", Parent: "root", Weight: 1, Reclaimable: true},
			{Name: "team-a", Parent: "root", Weight: 2, Reclaimable: true}, {Name: "team-b", Parent: "root", Weight: 1, Suspended: true}},
		Pending: []visibilityv1beta1.SnapshotWork{
			work(visibilityv1beta1.WorkloadPod, "web", "team-a", 100, 0, visibilityv1beta1.SnapshotMembers{Count: 1, Requests: cpu("2"), Nodes: []string{"n"}}),
			work(visibilityv1beta1.WorkloadPodGroup, "train", "team-b", 0, 2*time.Minute,
				visibilityv1beta1.SnapshotMembers{Count: 1, Requests: cpu("1")}, visibilityv1beta1.SnapshotMembers{Count: 2, Requests: cpu("2")}),
			work(visibilityv1beta1.WorkloadQueueUnit, strings.Repeat("u", 60), "team-a", 0, 7*time.Minute, visibilityv1beta1.SnapshotMembers{Count: 1, Requests: cpu("4")}),
		}}
}

// A snapshot taken on a scenario's real clock is stretched into simulated time: every distance from
// its moment, and every duration, scale times as long.
func TestStretchTurnsRealTimeIntoSimulatedTime(t *testing.T) {
	snap := testSnapshot()
	stretch(snap, 10)
	w := snap.Pending[1]
	switch {
	case !snap.ForecastTime.Time.Equal(snapAt):
		t.Errorf("moment %v, want it kept", snap.ForecastTime)
	case snap.Resolution.Duration != 100*time.Second:
		t.Errorf("resolution %s, want 100s", snap.Resolution.Duration)
	case !snap.Nodes[0].Running[0].EndP50.Equal(at(20*time.Minute + 3*time.Second)):
		t.Errorf("running pod's end %v, want 20m3s after the moment", snap.Nodes[0].Running[0].EndP50)
	case !w.Start.P50.Equal(at(20*time.Minute)) || !w.Since.Equal(at(-10*time.Minute)) || w.Runtime.P50.Duration != 50*time.Minute:
		t.Errorf("train expected at %v since %v, running %s: want 20m, -10m and 50m", w.Start.P50, w.Since, w.Runtime.P50.Duration)
	}
}

// A replay names each piece of work by its place in the order, gives each priority a class, and
// the work its runtime, its queue and its members; its default queue is updated, not created; it
// plays until the latest expected start and a quarter as long again, and 5 minutes more.
func TestReplayMakesTheSnapshotAScenario(t *testing.T) {
	r := newReplay(testSnapshot(), ReplayOptions{})
	if r.scenario.TimeScale != DefaultReplayScale || r.scenario.Duration.Duration != 7*time.Minute+105*time.Second+5*time.Minute {
		t.Errorf("scale %g, duration %s", r.scenario.TimeScale, r.scenario.Duration.Duration)
	}
	suspended := string(schedulingv1beta1.QueueStateSuspended)
	if len(r.scenario.Queues) != 2 || r.scenario.Queues[0].State != suspended || r.scenario.Queues[1].State != suspended ||
		r.defaultQueue == nil || r.scenario.Queues[0].Weight != 2 {
		t.Errorf("queues %+v, default %+v: want team-a of weight 2 and team-b, suspended until the work is in, the default apart", r.scenario.Queues, r.defaultQueue)
	}
	if len(r.scenario.PriorityClasses) != 1 || r.scenario.PriorityClasses[0] != (PriorityClass{Name: "replay-100", Value: 100}) {
		t.Errorf("priority classes %+v", r.scenario.PriorityClasses)
	}
	web, train, unit := r.jobs[0], r.jobs[1], r.jobs[2]
	if web.Name != "0-web" || web.Kind != KindPods || web.PriorityClass != "replay-100" || web.Runtime.Duration != 5*time.Minute || web.nodes[0] != "n" {
		t.Errorf("web: %+v", web)
	}
	if train.Name != "1-train" || train.Kind != KindGang || train.Pods != 3 || train.MinMember != 3 {
		t.Errorf("train: %+v", train)
	}
	if unit.Kind != KindUnit || len(unit.Name) != 50 || !strings.HasPrefix(unit.Name, "2-uuu") {
		t.Errorf("unit: %+v", unit)
	}
	p := r.predictions()
	if len(p) != 3 || p[1].name != "1-train" || p[1].p50 != 2*time.Minute || p[2].p50 != 7*time.Minute {
		t.Errorf("predictions %+v", p)
	}
	if got := priorityClassOf(-5); got != "replay-minus-5" {
		t.Errorf("class of -5: %s", got)
	}
}

// A snapshot file is read as kubectl writes it; one a replay cannot play is refused, naming the
// file and the field.
func TestLoadSnapshotRefusesWhatCannotBeReplayed(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	if err := saveSnapshot(good, testSnapshot()); err != nil {
		t.Fatal(err)
	}
	snap, err := LoadSnapshot(good)
	if err != nil || len(snap.Pending) != 3 {
		t.Fatalf("a saved snapshot: %v", err)
	}
	if end := snap.Nodes[0].Running[0].EndP50; !end.Equal(at(2*time.Minute + 300*time.Millisecond)) {
		t.Errorf("the running pod's end read back as %v: want it to the millisecond", end)
	}
	for name, tc := range map[string]struct{ text, want string }{
		"kind":  {"kind: Queue\nforecastTime: \"2026-11-27T10:00:00.000000Z\"\n", "kind: a ForecastSnapshot is needed, got Queue"},
		"time":  {"kind: ForecastSnapshot\n", "forecastTime: the moment of the snapshot is needed"},
		"nodes": {"forecastTime: \"2026-11-27T10:00:00.000000Z\"\n", "nodes: a replay needs at least one node"},
		"room":  {"forecastTime: \"2026-11-27T10:00:00.000000Z\"\nnodes: [{name: n}]\n", "nodes[0]: a name and what the node offers (allocatable) are needed"},
		"members": {"forecastTime: \"2026-11-27T10:00:00.000000Z\"\nnodes: [{name: n, allocatable: {cpu: 1}}]\npending: [{workload: {kind: Pod, name: w}, queue: q}]\n",
			"pending[0]: a workload name, a queue and at least one member are needed"},
		"unknown": {"forecastTime: \"2026-11-27T10:00:00.000000Z\"\nnodez: []\n", `unknown field "nodez"`},
		"count": {"forecastTime: \"2026-11-27T10:00:00.000000Z\"\nnodes: [{name: n, allocatable: {cpu: 1}}]\n" +
			"pending: [{workload: {kind: Pod, name: w}, queue: q, members: [{count: 0}]}]\n", "pending[0].members[0].count: must be at least 1, got 0"},
	} {
		path := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadSnapshot(path); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %s and saying %q", name, err, path, tc.want)
		}
	}
}
