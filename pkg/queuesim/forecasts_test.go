package queuesim

import (
	"reflect"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
)

// Each prediction is compared with the start of its work: a pod's binding, a gang's start, a unit's
// first pod; the error is the distance, relative to the wait from the forecast (a minute at least).
// A start predicted within the scenario that did not come is late; a start that came when none was
// predicted is unforeseen; one predicted beyond the end that did not come by then is beyond it.
// A comparison tells what came in between that the forecast could not hold: work submitted after
// it that started first, else an operator's action; the undisturbed ones are measured apart.
func TestForecastAccuracy(t *testing.T) {
	r := newRecorder(&clock{scale: 1})
	r.podStarts["p"] = 10 * time.Minute
	r.gangs[Namespace+"/g"] = &gangRecord{running: true, started: 20 * time.Minute}
	r.jobStarts["u"] = 5 * time.Minute
	// x came after p's forecast and started before p; y came with it; z came after g's forecast and
	// started after g.
	r.jobStarts["x"], r.jobStarts["y"], r.jobStarts["z"] = 6*time.Minute, time.Minute, 25*time.Minute
	arrivals := []arrival{{job: "y", at: 0}, {job: "x", at: 2 * time.Minute}, {job: "z", at: 12 * time.Minute}}
	actions := []ActionRecord{{At: 15 * time.Minute, What: "weight team-a=2"}}
	sim := &simulation{recorder: r, forecastChecks: 3, arrivals: arrivals, predictions: []prediction{
		{kind: visibilityv1beta1.WorkloadPod, name: "p", at: 0, p50: 8 * time.Minute},                                    // 2m off a 10m wait
		{kind: visibilityv1beta1.WorkloadPodGroup, name: "g", at: 10 * time.Minute, p50: 20 * time.Minute},               // exact
		{kind: visibilityv1beta1.WorkloadQueueUnit, name: "u", at: 4*time.Minute + 30*time.Second, p50: 6 * time.Minute}, // 1m off, wait under a minute
		{kind: visibilityv1beta1.WorkloadPod, name: "never", at: 0, p50: 25 * time.Minute},                               // late
		{kind: visibilityv1beta1.WorkloadPod, name: "never", at: 0, p50: 45 * time.Minute},                               // beyond the end: not counted
		{kind: visibilityv1beta1.WorkloadPodGroup, name: "g", at: 0, none: true},                                         // unforeseen
	}}
	got := sim.forecastAccuracy(30*time.Minute, actions)
	if len(got.Each) != 3 || got.Each[0].Name != "p" || got.Each[0].Predicted != 8*time.Minute || got.Each[0].Started != 10*time.Minute {
		t.Errorf("each compared: %+v; want p, g and u, p predicted at 8m and started at 10m", got.Each)
	}
	if len(got.Each) == 3 && (got.Each[0].After != "x" || got.Each[1].After != "weight team-a=2" || got.Each[2].After != "") {
		t.Errorf("what came in between: p %q, g %q, u %q; want x, the action and nothing", got.Each[0].After, got.Each[1].After, got.Each[2].After)
	}
	got.Each = nil
	want := ForecastAccuracy{Checks: 3, Predictions: 6, Compared: 3, MedianError: time.Minute, P90Error: time.Minute,
		MedianRelative: 0.2, P90Relative: 0.2, Late: 1, Unforeseen: 1, BeyondEnd: 1,
		Undisturbed: 1, UndisturbedMedianRelative: 1, UndisturbedP90Relative: 1}
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("accuracy %+v\nwant     %+v", *got, want)
	}
}

// Told to, the forecast knows each pod's runtime as the scenario asks its kubelet to run it, on the
// real clock (divided by the time scale); a pod that asks for none is left to the forecast's
// estimates, and so is every pod unless told to.
func TestKnownRuntimesAreTheScenarios(t *testing.T) {
	s := &Scenario{TimeScale: 15}
	if s.knownRuntime() != nil {
		t.Fatal("runtimes known without KnowRuntimes")
	}
	s.KnowRuntimes()
	known := s.knownRuntime()
	pod := (&JobStream{Queue: "q", Runtime: Duration{Duration: 12 * time.Minute}, CPU: Quantity{Quantity: resource.MustParse("1")}}).pod("p-0", "p", true, s.TimeScale)
	if d, ok := known(pod); !ok || d != 48*time.Second {
		t.Errorf("a pod of 12 simulated minutes at 15x: known %v (%t), want 48s", d, ok)
	}
	if d, ok := known(&v1.Pod{}); ok {
		t.Errorf("a pod that asks for no runtime: known %v, want none", d)
	}
}
