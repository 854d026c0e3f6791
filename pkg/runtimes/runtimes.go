// Package runtimes learns how long work runs, for the forecast of when pending work starts (package
// forecast): for each kind of work in each queue, a histogram of the runtimes of the work that
// finished, each runtime counting half as much one half-life later, from which the median and the
// 90th percentile are read. It is pure: values driven by the times they are given, so a simulated
// clock plays it as the real one does.
//
// A histogram's buckets grow by a fixed ratio (a runtime is known to within it, about 12%), from
// one second to about four years. A quantile is read by walking the buckets' weights and
// interpolating within the bucket it falls in, on the logarithmic scale.
package runtimes

import (
	"math"
	"time"
)

// Key names what a histogram learns: the runtimes of one kind of work (Job, PyTorchJob, Pod...) in
// one queue. An empty field is any: the estimate falls back to the queue's work of every kind, then
// to the kind in every queue.
type Key struct{ Queue, Kind string }

// Estimate is a runtime at the median and at the 90th percentile, and how much finished work it
// stands on (each runtime's weight, decayed).
type Estimate struct {
	P50, P90 time.Duration
	Weight   float64
}

// ratio is how much each bucket's upper bound exceeds its lower; buckets is how many there are.
const (
	ratio   = 1.25
	buckets = 84
)

// histogram is the decayed weights of the runtimes in each bucket, as of at.
type histogram struct {
	weights [buckets]float64
	at      time.Time
}

// Learner keeps the histograms.
type Learner struct {
	// HalfLife is how long after a runtime was observed it counts half.
	HalfLife time.Duration
	// MinWeight is the least weight an estimate stands on; below it, the next key is tried.
	MinWeight float64
	byKey     map[Key]*histogram
}

// NewLearner learns runtimes that count half after halfLife, and estimates from at least minWeight
// of finished work.
func NewLearner(halfLife time.Duration, minWeight float64) *Learner {
	return &Learner{HalfLife: halfLife, MinWeight: minWeight, byKey: map[Key]*histogram{}}
}

// Observe learns that work of key ran for runtime, ending at at. It counts for its queue and kind,
// its queue's work of every kind, and its kind in every queue.
func (l *Learner) Observe(key Key, runtime time.Duration, at time.Time) {
	b := bucketOf(runtime)
	for _, k := range []Key{key, {Queue: key.Queue}, {Kind: key.Kind}} {
		h := l.byKey[k]
		if h == nil {
			h = &histogram{at: at}
			l.byKey[k] = h
		}
		h.decayTo(at, l.HalfLife)
		h.weights[b]++
	}
}

// Estimate reads the runtime of work of key at at: from its queue and kind, else its queue's work of
// every kind, else its kind in every queue, whichever first stands on MinWeight; ok is false when
// none does.
func (l *Learner) Estimate(key Key, at time.Time) (Estimate, bool) {
	for _, k := range []Key{key, {Queue: key.Queue}, {Kind: key.Kind}} {
		h := l.byKey[k]
		if h == nil {
			continue
		}
		decayed := *h
		decayed.decayTo(at, l.HalfLife)
		if e := decayed.estimate(); e.Weight >= l.MinWeight && e.Weight > 0 {
			return e, true
		}
	}
	return Estimate{}, false
}

// decayTo moves the weights to at: each counts 2^(-(at - h.at)/halfLife) as much. Time never runs
// backwards: an earlier at leaves them as they are.
func (h *histogram) decayTo(at time.Time, halfLife time.Duration) {
	if !at.After(h.at) || halfLife <= 0 {
		return
	}
	d := math.Exp2(-at.Sub(h.at).Seconds() / halfLife.Seconds())
	for i := range h.weights {
		h.weights[i] *= d
	}
	h.at = at
}

// estimate reads the median and the 90th percentile.
func (h *histogram) estimate() Estimate {
	var total float64
	for _, w := range h.weights {
		total += w
	}
	if total == 0 {
		return Estimate{}
	}
	return Estimate{P50: h.quantile(0.5, total), P90: h.quantile(0.9, total), Weight: total}
}

// quantile is the runtime below which q of the weight lies, interpolated within its bucket on the
// logarithmic scale.
func (h *histogram) quantile(q, total float64) time.Duration {
	want, seen := q*total, 0.0
	for i, w := range h.weights {
		if w > 0 && seen+w >= want {
			return boundOf(float64(i) + (want-seen)/w)
		}
		seen += w
	}
	return boundOf(buckets)
}

// bucketOf is the bucket of a runtime: bucket i holds ratio^i to ratio^(i+1) seconds; shorter runs
// go in the first, longer in the last.
func bucketOf(runtime time.Duration) int {
	s := runtime.Seconds()
	if s <= 1 {
		return 0
	}
	return min(int(math.Log(s)/math.Log(ratio)), buckets-1)
}

// boundOf is the runtime at a fractional bucket position: ratio^x seconds, to the second.
func boundOf(x float64) time.Duration {
	return time.Duration(math.Round(math.Pow(ratio, x))) * time.Second
}
