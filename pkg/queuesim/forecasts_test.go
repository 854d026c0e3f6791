package queuesim

import (
	"reflect"
	"testing"
	"time"

	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
)

// Each prediction is compared with the start of its work: a pod's binding, a gang's start, a unit's
// first pod; the error is the distance, relative to the wait from the forecast (a minute at least).
// A start predicted within the scenario that did not come is late; a start that came when none was
// predicted is unforeseen; one predicted beyond the end that did not come by then is beyond it.
func TestForecastAccuracy(t *testing.T) {
	r := newRecorder(&clock{scale: 1})
	r.podStarts["p"] = 10 * time.Minute
	r.gangs[Namespace+"/g"] = &gangRecord{running: true, started: 20 * time.Minute}
	r.jobStarts["u"] = 5 * time.Minute
	sim := &simulation{recorder: r, forecastChecks: 3, predictions: []prediction{
		{kind: visibilityv1beta1.WorkloadPod, name: "p", at: 0, p50: 8 * time.Minute},                                    // 2m off a 10m wait
		{kind: visibilityv1beta1.WorkloadPodGroup, name: "g", at: 10 * time.Minute, p50: 20 * time.Minute},               // exact
		{kind: visibilityv1beta1.WorkloadQueueUnit, name: "u", at: 4*time.Minute + 30*time.Second, p50: 6 * time.Minute}, // 1m off, wait under a minute
		{kind: visibilityv1beta1.WorkloadPod, name: "never", at: 0, p50: 25 * time.Minute},                               // late
		{kind: visibilityv1beta1.WorkloadPod, name: "never", at: 0, p50: 45 * time.Minute},                               // beyond the end: not counted
		{kind: visibilityv1beta1.WorkloadPodGroup, name: "g", at: 0, none: true},                                         // unforeseen
	}}
	got := sim.forecastAccuracy(30 * time.Minute)
	if len(got.Each) != 3 || got.Each[0].Name != "p" || got.Each[0].Predicted != 8*time.Minute || got.Each[0].Started != 10*time.Minute {
		t.Errorf("each compared: %+v; want p, g and u, p predicted at 8m and started at 10m", got.Each)
	}
	got.Each = nil
	want := ForecastAccuracy{Checks: 3, Predictions: 6, Compared: 3, MedianError: time.Minute, P90Error: time.Minute,
		MedianRelative: 0.2, P90Relative: 0.2, Late: 1, Unforeseen: 1, BeyondEnd: 1}
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("accuracy %+v\nwant     %+v", *got, want)
	}
}
