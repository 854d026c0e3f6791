// Package runtimes learns how long work runs, for the forecast of when pending work starts (package
// forecast): for each kind of work in each queue, and each shape of its pods, a histogram of the
// runtimes of the work that finished, each runtime counting half as much one half-life later, from
// which the median and the 90th percentile are read. It is pure: values driven by the times they
// are given, so a simulated clock plays it as the real one does.
//
// A histogram's buckets grow by a fixed ratio, from one second to about four years, and each keeps
// the weight of its runs and their mean, so that the mean is read exactly. A bucket's runs are taken
// to lie evenly, on the logarithmic scale, over the widest span about their mean that the bucket
// holds: narrow when the mean lies near an edge of the bucket, the whole bucket when it is its
// middle. A quantile is read by walking the buckets' weights and interpolating within the span it
// falls in.
package runtimes

import (
	"math"
	"slices"
	"time"
)

// Key names what a histogram learns: the runtimes of one kind of work (Job, PyTorchJob, Pod...) in
// one queue, and of one shape of that kind's pods (what they ask for and how long they may run, as
// the caller names it). An empty field is any: the estimate falls back to the queue's work of the
// kind in every shape, then of every kind, then to the kind in every queue, then to all the work
// that finished.
type Key struct{ Queue, Kind, Shape string }

// Estimate is a runtime at the median and at the 90th percentile, and how much finished work it
// stands on (each runtime's weight, decayed).
type Estimate struct {
	P50, P90 time.Duration
	// Mean is the runtimes' mean: what many runs take each, on average.
	Mean   time.Duration
	Weight float64
	// Runs is the weight of all the runs of From (decayed): what the estimate was read from, those
	// shorter than the elapsed time included, which Weight leaves out.
	Runs float64
	// From is the key it was read from: the key asked for, or the broader one it fell back to.
	From Key
	// Outlived says the run has run longer than every run of From, which tell nothing of its end:
	// the estimate is Outlived's.
	Outlived bool
}

// ratio is how much each bucket's upper bound exceeds its lower; buckets is how many there are.
const (
	ratio   = 1.25
	buckets = 84
)

// Bounds of what is learned by kind: a kind is whatever controller a pod names, which a tenant
// chooses, so the kinds kept are bounded. A run of a kind beyond them counts for its queue alone.
const (
	// MaxKindsPerQueue is the most kinds learned in one queue.
	MaxKindsPerQueue = 32
	// MaxKinds is the most kinds learned across the queues.
	MaxKinds = 256
	// MaxShapesPerQueue is the most shapes learned in one queue, over its kinds.
	MaxShapesPerQueue = 64
	// MaxShapeLength is the longest name of a shape learned: a run of a longer one counts for its
	// kind alone.
	MaxShapeLength = 1024
)

// Buckets are a histogram's runs by bucket (bucket i holds runtimes of ratio^i to ratio^(i+1)
// seconds), the empty ones left out.
type Buckets map[int]Bucket

// Bucket is the decayed weight of the runs in one bucket, and their mean runtime (zero: not known,
// read as the bucket's middle).
type Bucket struct {
	Runs float64
	Mean time.Duration
}

// histogram is the decayed weights of the runtimes in each bucket, as of at, and the sums of their
// runtimes in seconds, each decayed as its weight is.
type histogram struct {
	weights [buckets]float64
	sums    [buckets]float64
	at      time.Time
}

// Learner keeps the histograms.
type Learner struct {
	// HalfLife is how long after a runtime was observed it counts half.
	HalfLife time.Duration
	// MinWeight is the least weight, in runs decayed and rounded, an estimate stands on; below it,
	// the next key is tried.
	MinWeight float64
	byKey     map[Key]*histogram
	// kindsIn counts the kinds learned in each queue; kinds, across the queues; shapesIn lists the
	// shapes learned in each queue.
	kindsIn  map[string]int
	kinds    int
	shapesIn map[string][]Key
}

// NewLearner learns runtimes that count half after halfLife, and estimates from at least minWeight
// of finished work.
func NewLearner(halfLife time.Duration, minWeight float64) *Learner {
	return &Learner{HalfLife: halfLife, MinWeight: minWeight, byKey: map[Key]*histogram{}, kindsIn: map[string]int{},
		shapesIn: map[string][]Key{}}
}

// Observe learns that work of key ran for runtime, ending at at. It counts for its queue, kind and
// shape, its queue and kind, its queue's work of every kind, and its kind in every queue; beyond
// MaxKindsPerQueue kinds in its queue, or MaxKinds in all, a new kind counts for its queue alone;
// beyond MaxShapesPerQueue shapes in its queue, a new shape takes the place of the one that weighs
// least now, if that weighs less than one run, else counts for its kind alone.
func (l *Learner) Observe(key Key, runtime time.Duration, at time.Time) {
	runtime = max(runtime, 0) // a start written by a clock ahead of the one that saw the end
	h := &histogram{at: at}
	b := bucketOf(runtime)
	h.weights[b], h.sums[b] = 1, runtime.Seconds()
	l.add(key, h, false)
}

// add adds h to the histograms of key, of its queue, and of its kind, as Observe counts a run. With
// decayOlder, h counts less the older it is than them; without, a run told late counts as one told
// now.
func (l *Learner) add(key Key, h *histogram, decayOlder bool) {
	keys := []Key{{Queue: key.Queue}, {}}
	if kind := (Key{Queue: key.Queue, Kind: key.Kind}); l.keeps(kind) {
		keys = append(keys, kind, Key{Kind: key.Kind})
		if key.Shape != "" && l.keepsShape(key, h) {
			keys = append(keys, key)
		}
	}
	for _, k := range keys {
		l.merge(k, h, decayOlder)
	}
}

// merge adds h to the histogram of k alone, as add does.
func (l *Learner) merge(k Key, h *histogram, decayOlder bool) {
	mine := l.byKey[k]
	if mine == nil {
		mine = &histogram{at: h.at}
		l.byKey[k] = mine
		l.count(k)
	}
	mine.decayTo(h.at, l.HalfLife)
	theirs := *h
	if decayOlder {
		theirs.decayTo(mine.at, l.HalfLife)
	}
	for i, w := range theirs.weights {
		mine.weights[i] += w
		mine.sums[i] += theirs.sums[i]
	}
}

// count counts a key learned for the first time against the bounds on kinds and shapes.
func (l *Learner) count(k Key) {
	switch {
	case k.Shape != "":
		l.shapesIn[k.Queue] = append(l.shapesIn[k.Queue], k)
	case k.Kind == "":
	case k.Queue == "":
		l.kinds++
	default:
		l.kindsIn[k.Queue]++
	}
}

// keepsShape says whether the shape of key is learned, h to be added to it: known already, within
// the bounds, or in the place of the queue's shape that weighs least at h's time, when that weighs
// less than h. So a place is not held for ever: a shape none of whose runs came for a while gives
// way to a new one, and shapes of one run each give way to one another, not to a shape that runs.
func (l *Learner) keepsShape(key Key, h *histogram) bool {
	if _, known := l.byKey[key]; known {
		return true
	}
	shapes := l.shapesIn[key.Queue]
	if len(key.Shape) > MaxShapeLength {
		return false
	}
	if len(shapes) < MaxShapesPerQueue {
		return true
	}
	victim, least := -1, h.weightAt(h.at, l.HalfLife)
	for i, k := range shapes {
		if w := l.byKey[k].weightAt(h.at, l.HalfLife); w < least {
			victim, least = i, w
		}
	}
	if victim < 0 {
		return false
	}
	delete(l.byKey, shapes[victim])
	l.shapesIn[key.Queue] = slices.Delete(shapes, victim, victim+1)
	return true
}

// keeps says whether the kind of key is learned: known already, or within the bounds.
func (l *Learner) keeps(key Key) bool {
	if _, ok := l.byKey[key]; ok {
		return true
	}
	_, kindKnown := l.byKey[Key{Kind: key.Kind}]
	return l.kindsIn[key.Queue] < MaxKindsPerQueue && (kindKnown || l.kinds < MaxKinds)
}

// Learned is what was learned of one kind of a queue's work: the runs of every shape, and the runs
// of each shape learned.
type Learned struct {
	Buckets Buckets
	Shapes  map[string]Buckets
}

// Export is what was learned of each kind of queue's work, decayed to at, by kind.
func (l *Learner) Export(queue string, at time.Time) map[string]Learned {
	out := map[string]Learned{}
	for k, h := range l.byKey {
		if k.Queue != queue || k.Kind == "" {
			continue
		}
		b := h.export(at, l.HalfLife)
		if len(b) == 0 {
			continue
		}
		kind := out[k.Kind]
		if k.Shape == "" {
			kind.Buckets = b
		} else {
			if kind.Shapes == nil {
				kind.Shapes = map[string]Buckets{}
			}
			kind.Shapes[k.Shape] = b
		}
		out[k.Kind] = kind
	}
	return out
}

// export is the histogram's weights decayed to at, and its means, the empty buckets left out.
func (h *histogram) export(at time.Time, halfLife time.Duration) Buckets {
	decayed := *h
	decayed.decayTo(at, halfLife)
	b := Buckets{}
	for i, w := range decayed.weights {
		if w > 0 {
			b[i] = Bucket{Runs: w, Mean: seconds(decayed.sums[i] / w)}
		}
	}
	return b
}

// Import adds what Export gave for queue at at, as if its runs had been observed here: buckets out
// of range are left out, and shapes beyond the bounds.
func (l *Learner) Import(queue string, kinds map[string]Learned, at time.Time) {
	for kind, learned := range kinds {
		key := Key{Queue: queue, Kind: kind}
		l.add(key, imported(learned.Buckets, at), true)
		if !l.keeps(key) {
			continue
		}
		for shape, b := range learned.Shapes {
			h := imported(b, at)
			if key.Shape = shape; shape != "" && l.keepsShape(key, h) {
				l.merge(key, h, true)
			}
		}
	}
}

// imported is a histogram of the buckets b at at, those out of range left out; a bucket's mean,
// unknown or outside the bucket, is its middle.
func imported(b Buckets, at time.Time) *histogram {
	h := &histogram{at: at}
	for i, bucket := range b {
		if i < 0 || i >= buckets || bucket.Runs <= 0 {
			continue
		}
		mean := math.Pow(ratio, float64(i)+0.5)
		// Exported to the millisecond, a mean at an edge of its bucket may round a little past it.
		lo, hi := edges(i)
		if m := bucket.Mean.Seconds(); m > 0 && m >= lo-1e-3 && m <= hi+1e-3 {
			mean = min(max(m, lo), hi)
		}
		h.weights[i], h.sums[i] = bucket.Runs, bucket.Runs*mean
	}
	return h
}

// Estimate reads the runtime of work of key at at: from its queue, kind and shape, else its queue
// and kind, else its queue's work of every kind, else its kind in every queue, else all the work
// that finished, whichever first stands on MinWeight; ok is false when none does.
func (l *Learner) Estimate(key Key, at time.Time) (Estimate, bool) {
	return l.EstimateAfter(key, at, 0)
}

// EstimateAfter is Estimate for work that has run for elapsed already: the runtime it is expected to
// reach, read from the runtimes longer than elapsed (for a run past every one learned, see
// Outlived). Which key it reads is chosen as Estimate chooses it.
func (l *Learner) EstimateAfter(key Key, at time.Time, elapsed time.Duration) (Estimate, bool) {
	for i, k := range []Key{key, {Queue: key.Queue, Kind: key.Kind}, {Queue: key.Queue}, {Kind: key.Kind}, {}} {
		if i == 1 && key.Shape == "" {
			continue // the key itself
		}
		h := l.byKey[k]
		if h == nil {
			continue
		}
		d := h.decay(at, l.HalfLife)
		all := h.total() * d
		if math.Round(all) < l.MinWeight || all <= 0 {
			continue
		}
		// The quantiles and the mean do not change as every weight decays alike; the weight does.
		e := h.estimateAfter(elapsed)
		switch {
		case e.Weight > 0:
			e.Weight *= d
		case elapsed < h.top():
			// Within the runs learned, past the span their bucket's mean gives them: about to end.
			e = Estimate{P50: elapsed, P90: elapsed, Mean: elapsed}
		default:
			e = Outlived(elapsed)
			e.Outlived = true
		}
		e.From, e.Runs = k, all
		return e, true
	}
	return Estimate{}, false
}

// Outlived is the runtime expected of a run that has run for elapsed, longer than every run
// learned, which therefore tell nothing of its end: runtimes taken to be heavy-tailed, as the
// lifetimes of computing work are found to be (the chance that a run that reached elapsed reaches t
// is elapsed/t), it runs as long again at the median (its mean, which that tail does not bound,
// read as the median) and ten times as long in all at the 90th percentile.
func Outlived(elapsed time.Duration) Estimate {
	elapsed = min(elapsed, math.MaxInt64/10) // a start decades ago, as a clock gone wrong writes it
	return Estimate{P50: 2 * elapsed, P90: 10 * elapsed, Mean: 2 * elapsed}
}

// weightAt is the histogram's whole weight decayed to at (as it is, for an earlier at).
func (h *histogram) weightAt(at time.Time, halfLife time.Duration) float64 {
	return h.total() * h.decay(at, halfLife)
}

// total is the histogram's whole weight, as of its own time.
func (h *histogram) total() float64 {
	var total float64
	for _, w := range h.weights {
		total += w
	}
	return total
}

// decay is how much the histogram's weights count at at: 2^(-(at - h.at)/halfLife), one for an
// earlier at.
func (h *histogram) decay(at time.Time, halfLife time.Duration) float64 {
	if !at.After(h.at) || halfLife <= 0 {
		return 1
	}
	return math.Exp2(-at.Sub(h.at).Seconds() / halfLife.Seconds())
}

// top is the upper bound of the longest runs' bucket, in time; zero for no runs.
func (h *histogram) top() time.Duration {
	for i := buckets - 1; i >= 0; i-- {
		if h.weights[i] > 0 {
			return boundOf(float64(i + 1))
		}
	}
	return 0
}

// decayTo moves the weights to at: each counts 2^(-(at - h.at)/halfLife) as much. Time never runs
// backwards: an earlier at leaves them as they are.
func (h *histogram) decayTo(at time.Time, halfLife time.Duration) {
	if !at.After(h.at) {
		return
	}
	d := h.decay(at, halfLife)
	for i := range h.weights {
		h.weights[i] *= d
		h.sums[i] *= d
	}
	h.at = at
}

// estimateAfter reads the median, the 90th percentile and the mean of the runtimes longer than
// elapsed, and the weight of those: each bucket's weight lies evenly over its span (spread), and the
// part of a span below elapsed is left out.
func (h *histogram) estimateAfter(elapsed time.Duration) Estimate {
	from := 0.0
	if s := elapsed.Seconds(); s > 1 {
		from = math.Log(s) / math.Log(ratio)
	}
	var parts [buckets]piece
	var total, sum float64
	for i := range h.weights {
		parts[i] = h.above(i, from)
		total, sum = total+parts[i].weight, sum+parts[i].sum
	}
	if total == 0 {
		return Estimate{}
	}
	quantile := func(q float64) time.Duration {
		want, seen := q*total, 0.0
		for _, p := range parts {
			if p.weight > 0 && seen+p.weight >= want {
				return boundOf(p.lo + (want-seen)/p.weight*(p.hi-p.lo))
			}
			seen += p.weight
		}
		return boundOf(buckets)
	}
	return Estimate{P50: quantile(0.5), P90: quantile(0.9), Mean: seconds(sum / total), Weight: total}
}

// piece is the part of a bucket's runs above some runtime: their weight, the sum of their runtimes
// in seconds, and the span (on the logarithmic scale) they lie over.
type piece struct{ weight, sum, lo, hi float64 }

// above is the part of bucket i's runs longer than ratio^from seconds: all of them when their
// span starts there or later (their sum as learned), else the part of the span above it.
func (h *histogram) above(i int, from float64) piece {
	if h.weights[i] <= 0 {
		return piece{}
	}
	lo, hi := h.spread(i)
	switch {
	case from <= lo:
		return piece{weight: h.weights[i], sum: h.sums[i], lo: lo, hi: hi}
	case from >= hi:
		return piece{}
	}
	w := h.weights[i] * (hi - from) / (hi - lo)
	return piece{weight: w, sum: w * math.Pow(ratio, (from+hi)/2), lo: from, hi: hi}
}

// spread is the span, on the logarithmic scale, that bucket i's runs are taken to lie evenly over:
// the widest about their mean that the bucket holds (the bucket's middle, for a mean unknown).
func (h *histogram) spread(i int) (lo, hi float64) {
	x := float64(i) + 0.5
	if mean := h.sums[i] / h.weights[i]; mean > 0 {
		x = min(max(math.Log(mean)/math.Log(ratio), float64(i)), float64(i+1))
	}
	half := min(x-float64(i), float64(i+1)-x)
	return x - half, x + half
}

// edges are the shortest and longest runtimes bucket i holds, in seconds: the first holds those
// under a second too, the last those beyond it.
func edges(i int) (lo, hi float64) {
	lo, hi = math.Pow(ratio, float64(i)), math.Pow(ratio, float64(i+1))
	if i == 0 {
		lo = 0
	}
	if i == buckets-1 {
		hi = math.Inf(1)
	}
	return lo, hi
}

// BucketOf is the bucket of a runtime, for a caller that names a shape by a runtime bound: a bucket's
// upper bound is 1.25 times its lower.
func BucketOf(runtime time.Duration) int { return bucketOf(runtime) }

// bucketOf is the bucket of a runtime: bucket i holds ratio^i to ratio^(i+1) seconds; shorter runs
// go in the first, longer in the last.
func bucketOf(runtime time.Duration) int {
	s := runtime.Seconds()
	if s <= 1 {
		return 0
	}
	return min(int(math.Log(s)/math.Log(ratio)), buckets-1)
}

// boundOf is the runtime at a fractional bucket position: ratio^x seconds, to the millisecond.
func boundOf(x float64) time.Duration { return seconds(math.Pow(ratio, x)) }

// seconds is a duration of s seconds, to the millisecond.
func seconds(s float64) time.Duration {
	return time.Duration(s * float64(time.Second)).Round(time.Millisecond)
}
