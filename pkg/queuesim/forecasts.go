package queuesim

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/readmodel"
)

// prediction is one piece of pending work's expected start, as one forecast gave it, in simulated
// time.
type prediction struct {
	kind visibilityv1beta1.WorkloadKind
	name string
	// at is when the forecast was made; p50 the start it expected, none when it expected none
	// within its horizon.
	at, p50 time.Duration
	none    bool
}

// KnowRuntimes has the forecast play each pod's runtime as the scenario gives it, in place of the
// runtimes it learns from the pods that finished (the default, before any did): the error left is
// its model's, apart from its runtime estimates.
func (s *Scenario) KnowRuntimes() { s.knownRuntimes = true }

// knownRuntime tells a pod's runtime as it asks its kubelet for it, on the real clock, when the
// forecast is to know it (KnowRuntimes); nil otherwise.
func (s *Scenario) knownRuntime() readmodel.KnownRuntimes {
	if !s.knownRuntimes {
		return nil
	}
	c := &clock{scale: s.TimeScale}
	return func(pod *v1.Pod) (time.Duration, bool) {
		runtime, ok := askedRuntime(pod)
		return c.real(runtime), ok
	}
}

// ForecastAccuracy compares the expected starts the live view gave, read every forecastCheck, with
// the starts that followed: each piece of pending work counted once per forecast that held it.
type ForecastAccuracy struct {
	// Checks counts the reads; Predictions the pieces of work they held with an expected start.
	Checks      int `json:"checks"`
	Predictions int `json:"predictions"`
	// Compared counts the predictions of a start that came within the scenario. Their error is the
	// distance between the predicted and the actual start; their relative error, that over the
	// actual wait from the forecast (a minute at least).
	Compared       int           `json:"compared"`
	MedianError    time.Duration `json:"medianError"`
	P90Error       time.Duration `json:"p90Error"`
	MedianRelative float64       `json:"medianRelativeError"`
	P90Relative    float64       `json:"p90RelativeError"`
	// Late counts the predictions of a start within the scenario for work that had not started by
	// its end; Unforeseen, the predictions of no start within the horizon for work that started;
	// BeyondEnd, the predictions of a start after the scenario's end (or none within the horizon)
	// for work that had not started by then, which the scenario cannot judge.
	Late       int `json:"late"`
	Unforeseen int `json:"unforeseen"`
	BeyondEnd  int `json:"beyondEnd"`
	// Undisturbed counts the compared predictions with nothing between the forecast and the start
	// that the forecast could not hold (PredictionResult.After), and their relative errors.
	Undisturbed               int     `json:"undisturbed"`
	UndisturbedMedianRelative float64 `json:"undisturbedMedianRelativeError"`
	UndisturbedP90Relative    float64 `json:"undisturbedP90RelativeError"`
	// KnownRuntimes says the forecast was told each pod's runtime (Scenario.KnowRuntimes).
	KnownRuntimes bool `json:"knownRuntimes,omitempty"`
	// Each is every prediction compared, in the order read.
	Each []PredictionResult `json:"each,omitempty"`
}

// PredictionResult is one expected start and the start that followed, in simulated time.
type PredictionResult struct {
	Kind      string        `json:"kind"`
	Name      string        `json:"name"`
	At        time.Duration `json:"at"`
	Predicted time.Duration `json:"predicted"`
	Started   time.Duration `json:"started"`
	// After names what came between the forecast and the start that the forecast could not hold:
	// the first piece of work submitted after it that started before (its job's name), else the
	// first operator action; empty for none.
	After string `json:"after,omitempty"`
}

// leastWait is the least wait a relative error is measured against: work that starts right after a
// forecast would otherwise weigh its error by nearly nothing.
const leastWait = time.Minute

// checkForecasts reads the live view's pending work of every namespace and records each expected
// start once per forecast; a view not served yet (the scheduler's caches not synced) is skipped.
func (sim *simulation) checkForecasts(ctx context.Context) {
	list, err := sim.queues.VisibilityV1beta1().PendingWorkloads("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	sim.forecastChecks++
	for _, w := range list.Items {
		s := w.ExpectedStart
		if s == nil || w.Namespace != Namespace {
			continue
		}
		p := prediction{kind: w.Workload.Kind, name: w.Workload.Name, at: sim.clock.simulated(s.ForecastTime.Time), none: s.P50 == nil}
		if s.P50 != nil {
			p.p50 = sim.clock.simulated(s.P50.Time)
		}
		key := fmt.Sprintf("%s/%s/%d", p.kind, p.name, p.at)
		if !sim.predicted[key] {
			sim.predicted[key] = true
			sim.predictions = append(sim.predictions, p)
		}
	}
}

// forecastAccuracy compares the predictions with the starts the recorder saw, and tells those with
// work submitted or actions taken in between (after). Call with the recorder's lock held.
func (sim *simulation) forecastAccuracy(end time.Duration, actions []ActionRecord) *ForecastAccuracy {
	a := &ForecastAccuracy{Checks: sim.forecastChecks, Predictions: len(sim.predictions)}
	var errs []time.Duration
	var relative, undisturbed []float64
	for _, p := range sim.predictions {
		started, ok := sim.startOf(p)
		switch {
		case !ok && !p.none && p.p50 <= end:
			a.Late++
		case ok && p.none:
			a.Unforeseen++
		case !ok:
			a.BeyondEnd++
		case ok:
			e := started - p.p50
			if e < 0 {
				e = -e
			}
			rel := float64(e) / float64(max(started-p.at, leastWait))
			errs, relative = append(errs, e), append(relative, rel)
			after := sim.after(p.at, started, actions)
			if after == "" {
				undisturbed = append(undisturbed, rel)
			}
			a.Each = append(a.Each, PredictionResult{Kind: string(p.kind), Name: p.name, At: p.at, Predicted: p.p50, Started: started, After: after})
		}
	}
	a.Compared, a.Undisturbed = len(errs), len(undisturbed)
	a.MedianError, a.P90Error = percentile(errs, 50), percentile(errs, 90)
	a.MedianRelative, a.P90Relative = quantile(relative, 50), quantile(relative, 90)
	a.UndisturbedMedianRelative, a.UndisturbedP90Relative = quantile(undisturbed, 50), quantile(undisturbed, 90)
	return a
}

// after names what came between a forecast at at and a start at started that the forecast could not
// hold: the first piece of work submitted after the forecast that started before (a job's first pod
// bound), else the first operator action in between; "" for none. Call with the recorder's lock
// held.
func (sim *simulation) after(at, started time.Duration, actions []ActionRecord) string {
	first := sort.Search(len(sim.arrivals), func(i int) bool { return sim.arrivals[i].at > at })
	for _, later := range sim.arrivals[first:] {
		if later.at >= started {
			break
		}
		if s, ok := sim.recorder.jobStarts[later.job]; ok && s < started {
			return later.job
		}
	}
	for _, action := range actions {
		if action.At > at && action.At < started {
			return action.What
		}
	}
	return ""
}

// startOf is when the work of a prediction started, as the recorder saw it: a pod's binding, a
// gang's minMember-th, a QueueUnit's Job's first pod's. Call with the recorder's lock held.
func (sim *simulation) startOf(p prediction) (time.Duration, bool) {
	r := sim.recorder
	switch p.kind {
	case visibilityv1beta1.WorkloadPod:
		at, ok := r.podStarts[p.name]
		return at, ok
	case visibilityv1beta1.WorkloadPodGroup:
		g := r.gangs[Namespace+"/"+p.name]
		if g == nil || !g.running {
			return 0, false
		}
		return g.started, true
	}
	at, ok := r.jobStarts[p.name]
	return at, ok
}

// quantile is the p-th percentile (0–100) of xs, rounded to a thousandth; 0 for none.
func quantile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sorted := append([]float64(nil), xs...)
	sort.Float64s(sorted)
	return math.Round(sorted[int(p/100*float64(len(sorted)-1))]*1000) / 1000
}
