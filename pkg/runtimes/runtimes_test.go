package runtimes

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

// within says whether got is d to within a bucket's ratio.
func within(got, d time.Duration) bool {
	return float64(got) >= float64(d)/ratio && float64(got) <= float64(d)*ratio
}

// The median and the 90th percentile of the runtimes seen, to within a bucket.
func TestEstimateReadsTheQuantiles(t *testing.T) {
	l := NewLearner(24*time.Hour, 1)
	key := Key{Queue: "q", Kind: "Job"}
	for i := 1; i <= 100; i++ {
		l.Observe(key, time.Duration(i)*time.Minute, t0)
	}
	e, ok := l.Estimate(key, t0)
	if !ok || !within(e.P50, 50*time.Minute) || !within(e.P90, 90*time.Minute) || e.Weight != 100 {
		t.Errorf("estimate %+v, %v; want about 50m and 90m from 100 runs", e, ok)
	}
}

// Older runtimes count less: after a half-life, a run counts half of a new one.
func TestOldRuntimesCountLess(t *testing.T) {
	l := NewLearner(time.Hour, 1)
	key := Key{Queue: "q", Kind: "Job"}
	for range 10 {
		l.Observe(key, time.Minute, t0)
	}
	for range 10 {
		l.Observe(key, time.Hour, t0.Add(3*time.Hour))
	}
	e, ok := l.Estimate(key, t0.Add(3*time.Hour))
	// The old runs weigh 10/8 beside the new ones' 10: the median is among the new.
	if !ok || !within(e.P50, time.Hour) || e.Weight < 11.2 || e.Weight > 11.3 {
		t.Errorf("estimate %+v; want the median near 1h, on a weight of 11.25", e)
	}
	// A time before the last observation leaves the weights as they are.
	if e, _ := l.Estimate(key, t0); e.Weight < 11.2 || e.Weight > 11.3 {
		t.Errorf("an estimate read at an earlier time decayed the weights: %+v", e)
	}
}

// An estimate stands on enough finished work: its queue and kind's, else its queue's, else its kind's
// anywhere, else all the work that finished, and says which; none when nothing is known.
func TestEstimateFallsBack(t *testing.T) {
	l := NewLearner(24*time.Hour, 3)
	l.Observe(Key{Queue: "q", Kind: "Job"}, time.Minute, t0)
	l.Observe(Key{Queue: "q", Kind: "PyTorchJob"}, time.Minute, t0)
	l.Observe(Key{Queue: "q", Kind: "Job"}, time.Minute, t0)
	for range 3 {
		l.Observe(Key{Queue: "other", Kind: "RayJob"}, 2*time.Hour, t0)
	}
	if e, ok := l.Estimate(Key{Queue: "q", Kind: "Job"}, t0); !ok || e.Weight != 3 || !within(e.P50, time.Minute) || e.From != (Key{Queue: "q"}) {
		t.Errorf("q's Jobs, 2 runs: %+v, %v; want q's 3 runs", e, ok)
	}
	if e, ok := l.Estimate(Key{Queue: "q", Kind: "RayJob"}, t0); !ok || !within(e.P50, time.Minute) {
		t.Errorf("q's RayJobs, none: %+v, %v; want q's other work", e, ok)
	}
	if e, ok := l.Estimate(Key{Queue: "new", Kind: "RayJob"}, t0); !ok || !within(e.P50, 2*time.Hour) || e.From != (Key{Kind: "RayJob"}) {
		t.Errorf("a new queue's RayJobs: %+v, %v; want RayJobs anywhere", e, ok)
	}
	if e, ok := l.Estimate(Key{Queue: "new", Kind: "MPIJob"}, t0); !ok || e.Weight != 6 || e.From != (Key{}) {
		t.Errorf("a new queue's MPIJobs, none anywhere: %+v, %v; want the 6 runs of all the work", e, ok)
	}
	if _, ok := NewLearner(24*time.Hour, 3).Estimate(Key{Queue: "new", Kind: "MPIJob"}, t0); ok {
		t.Error("nothing known: want no estimate")
	}
}

// Work that has run for a while is expected to reach the runtimes longer than that: of runs of 2
// and 8 minutes, work past 3 minutes reaches 8; past every run learned, it ends now.
func TestEstimateAfterReadsTheLongerRuns(t *testing.T) {
	l := NewLearner(24*time.Hour, 3)
	for range 6 {
		l.Observe(Key{Queue: "q", Kind: "Pod"}, 2*time.Minute, t0)
	}
	for range 2 {
		l.Observe(Key{Queue: "q", Kind: "Pod"}, 8*time.Minute, t0)
	}
	key := Key{Queue: "q", Kind: "Pod"}
	if e, _ := l.Estimate(key, t0); !within(e.P50, 2*time.Minute) || !within(e.Mean, (6*2+2*8)*time.Minute/8) {
		t.Errorf("from the start: median %s, mean %s; want about 2m and 3m30s", e.P50, e.Mean)
	}
	if e, ok := l.EstimateAfter(key, t0, 3*time.Minute); !ok || !within(e.P50, 8*time.Minute) || !within(e.P90, 8*time.Minute) || e.Weight != 2 {
		t.Errorf("past 3m: %+v, %v; want about 8m, from the 2 longer runs", e, ok)
	}
	if e, ok := l.EstimateAfter(key, t0, time.Hour); !ok || e.P50 != 2*time.Hour || e.Mean != 2*time.Hour || e.P90 != 10*time.Hour {
		t.Errorf("past every run: %+v, %v; want it to run as long again (2h), 10h in all at the 90th percentile", e, ok)
	}
}

// A runtime that recurs is read as it is, not as its bucket's middle (7.5s lies in the bucket of
// 7.45s to 9.31s, whose middle is 8.33s): the mean is the runtime's, and its runs lie about it, so
// the median and the 90th percentile are within a percent of it, and a run that reached it is
// about to end.
func TestARecurringRuntimeIsReadAsItIs(t *testing.T) {
	l := NewLearner(24*time.Hour, 3)
	key := Key{Queue: "q", Kind: "Pod"}
	for range 3 {
		l.Observe(key, 7500*time.Millisecond, t0)
	}
	near := func(got, want time.Duration) bool { return got >= want && float64(got) <= 1.01*float64(want) }
	for _, elapsed := range []time.Duration{0, 5 * time.Second} {
		if e, ok := l.EstimateAfter(key, t0, elapsed); !ok || e.Mean != 7500*time.Millisecond || !near(e.P50, 7500*time.Millisecond) ||
			!near(e.P90, 7500*time.Millisecond) || e.Weight != 3 {
			t.Errorf("after %s: %+v, %v; want a mean of 7.5s and the quantiles within a percent above it, from 3 runs", elapsed, e, ok)
		}
	}
	if e, _ := l.EstimateAfter(key, t0, 7500*time.Millisecond); !near(e.Mean, 7500*time.Millisecond) {
		t.Errorf("at 7.5s: %+v; want it to end within a percent", e)
	}
	// Past the runs' span but within their bucket (up to 9.31s), runs learned reach that far.
	if e, _ := l.EstimateAfter(key, t0, 8*time.Second); e.Mean != 8*time.Second || e.P90 != 8*time.Second {
		t.Errorf("at 8s, within the runs' bucket: %+v; want it to end now", e)
	}
	if e, _ := l.EstimateAfter(key, t0, 10*time.Second); e.Mean != 20*time.Second || e.P90 != 100*time.Second {
		t.Errorf("past every run: %+v; want it to run as long again, to 20s (100s in all at the 90th percentile)", e)
	}
	// Runs of one bucket that differ spread about their mean, as far as the bucket allows.
	spread := Key{Queue: "q", Kind: "Job"}
	for _, d := range []time.Duration{56 * time.Second, 68 * time.Second} {
		l.Observe(spread, d, t0)
		l.Observe(spread, d, t0)
	}
	if e, _ := l.Estimate(spread, t0); e.Mean != 62*time.Second || !within(e.P50, 62*time.Second) || e.P90 <= e.P50 || e.P90 > 70*time.Second {
		t.Errorf("runs of 56s and 68s: %+v; want a mean of 62s, the median about it and the 90th percentile above", e)
	}
}

// Buckets imported without their mean (a checkpoint written before the means were kept) are read
// as their middle; a mean outside its bucket is read so too, but for one rounded to the
// millisecond past its edge, which is read at the edge; one under a second stays in the first.
func TestBucketsWithoutAMeanAreReadAsTheirMiddle(t *testing.T) {
	l := NewLearner(24*time.Hour, 3)
	edge := (time.Duration(math.Pow(ratio, 18) * float64(time.Second))).Truncate(time.Millisecond) // 55.511s, just below the edge
	l.Import("q", map[string]Learned{"Pod": {Buckets: Buckets{18: {Runs: 3}}}, "Job": {Buckets: Buckets{18: {Runs: 3, Mean: time.Hour}}},
		"Edge": {Buckets: Buckets{18: {Runs: 3, Mean: edge}}}, "Short": {Buckets: Buckets{0: {Runs: 3, Mean: 300 * time.Millisecond}}}}, t0)
	middle := seconds(math.Pow(ratio, 18.5)) // 62.06s
	for kind, want := range map[string]time.Duration{"Pod": middle, "Job": middle, "Edge": seconds(math.Pow(ratio, 18)), "Short": 300 * time.Millisecond} {
		if e, ok := l.Estimate(Key{Queue: "q", Kind: kind}, t0); !ok || (e.Mean-want).Abs() > time.Millisecond {
			t.Errorf("%s: %+v, %v; want a mean of %s", kind, e, ok, want)
		}
	}
}

// A start written by a clock ahead of the one that saw the end makes a runtime below zero: it
// counts as a run of none, and no mean goes below zero.
func TestARuntimeBelowZeroCountsAsNone(t *testing.T) {
	l := NewLearner(24*time.Hour, 1)
	key := Key{Queue: "q", Kind: "Pod"}
	l.Observe(key, -time.Minute, t0)
	if e, ok := l.Estimate(key, t0); !ok || e.Mean != 0 || e.Weight != 1 {
		t.Errorf("estimate %+v, %v; want a mean of 0 from one run", e, ok)
	}
	if b := l.Export("q", t0)["Pod"].Buckets[0]; b.Mean != 0 || b.Runs != 1 {
		t.Errorf("exported %+v; want one run of none", b)
	}
}

// Runtimes below a second and beyond the last bucket are kept at the ends.
func TestBucketEnds(t *testing.T) {
	if b := bucketOf(0); b != 0 {
		t.Errorf("bucket of 0: %d", b)
	}
	if b := bucketOf(100 * 365 * 24 * time.Hour); b != buckets-1 {
		t.Errorf("bucket of a century: %d", b)
	}
}

// What is exported at a moment and imported elsewhere estimates as the original does, there and
// later: the runtimes survive a restart.
func TestExportedRuntimesImportAlike(t *testing.T) {
	l := NewLearner(24*time.Hour, 3)
	for i := range 5 {
		l.Observe(Key{Queue: "q", Kind: "Job"}, time.Duration(10+i)*time.Minute, t0.Add(time.Duration(i)*time.Hour))
	}
	l.Observe(Key{Queue: "q", Kind: "PyTorchJob"}, 2*time.Hour, t0.Add(5*time.Hour))
	l.Observe(Key{Queue: "other", Kind: "Job"}, time.Hour, t0.Add(5*time.Hour))
	for i := range 3 {
		l.Observe(Key{Queue: "q", Kind: "Job", Shape: "cpu=8"}, 3*time.Hour, t0.Add(5*time.Hour+time.Duration(i)*time.Minute))
	}
	at := t0.Add(6 * time.Hour)
	exported := l.Export("q", at)
	if len(exported) != 2 || len(exported["Job"].Shapes) != 1 || exported["PyTorchJob"].Shapes != nil {
		t.Fatalf("exported kinds %v, want Job, with its one shape, and PyTorchJob", exported)
	}
	restored := NewLearner(24*time.Hour, 3)
	restored.Import("q", exported, at)
	for _, key := range []Key{{Queue: "q", Kind: "Job"}, {Queue: "q", Kind: "Job", Shape: "cpu=8"}, {Queue: "q", Kind: "PyTorchJob"}, {Queue: "q"}} {
		later := at.Add(12 * time.Hour)
		want, wantOK := l.Estimate(key, later)
		got, ok := restored.Estimate(key, later)
		// The means are exported to the millisecond, and the quantiles read about them.
		if ok != wantOK || (got.P50-want.P50).Abs() > time.Millisecond || (got.P90-want.P90).Abs() > time.Millisecond || (got.Mean-want.Mean).Abs() > time.Millisecond ||
			got.From != want.From || math.Abs(got.Weight-want.Weight) > 1e-9 {
			t.Errorf("%+v: restored %+v (%v), want %+v (%v)", key, got, ok, want, wantOK)
		}
	}
}

// The kinds learned are bounded: past MaxKindsPerQueue in a queue, a new kind's run counts for the
// queue alone, and the estimate for that kind falls back to the queue's.
func TestKindsAreBounded(t *testing.T) {
	l := NewLearner(24*time.Hour, 1)
	for i := range MaxKindsPerQueue {
		l.Observe(Key{Queue: "q", Kind: fmt.Sprintf("Kind%d", i)}, time.Minute, t0)
	}
	l.Observe(Key{Queue: "q", Kind: "OneTooMany"}, time.Hour, t0)
	if got := len(l.Export("q", t0)); got != MaxKindsPerQueue {
		t.Errorf("%d kinds kept in the queue, want %d", got, MaxKindsPerQueue)
	}
	if _, ok := l.byKey[Key{Kind: "OneTooMany"}]; ok {
		t.Error("the kind beyond the bound was learned across the queues")
	}
	if e, ok := l.Estimate(Key{Queue: "q"}, t0); !ok || e.Weight != MaxKindsPerQueue+1 {
		t.Errorf("the queue's estimate %+v stands on %v runs, want %d", e, e.Weight, MaxKindsPerQueue+1)
	}
}

// Work of one kind in one queue that comes in shapes is learned by shape: runs of 2 and 8 minutes
// of two shapes are each read apart, once each shape stands on enough runs; until then, and for
// work of no shape, the kind's runs are read.
func TestShapesOfAKindAreLearnedApart(t *testing.T) {
	l := NewLearner(24*time.Hour, 3)
	short, long := Key{Queue: "q", Kind: "Pod", Shape: "cpu=1"}, Key{Queue: "q", Kind: "Pod", Shape: "cpu=2"}
	for range 6 {
		l.Observe(short, 2*time.Minute, t0)
	}
	for range 2 {
		l.Observe(long, 8*time.Minute, t0)
	}
	if e, ok := l.Estimate(short, t0); !ok || !within(e.Mean, 2*time.Minute) || e.From != short {
		t.Errorf("the short shape: %+v, %v; want its own 2m", e, ok)
	}
	if e, ok := l.Estimate(long, t0); !ok || e.Weight != 8 || e.From != (Key{Queue: "q", Kind: "Pod"}) {
		t.Errorf("the long shape, 2 runs: %+v, %v; want the kind's 8 runs", e, ok)
	}
	l.Observe(long, 8*time.Minute, t0)
	if e, ok := l.Estimate(long, t0); !ok || !within(e.Mean, 8*time.Minute) || e.From != long {
		t.Errorf("the long shape, 3 runs: %+v, %v; want its own 8m", e, ok)
	}
	if e, ok := l.Estimate(Key{Queue: "q", Kind: "Pod"}, t0); !ok || e.Weight != 9 {
		t.Errorf("no shape: %+v, %v; want the kind's 9 runs", e, ok)
	}
}

// The shapes learned in a queue are bounded: past MaxShapesPerQueue, a new shape's run counts for its
// kind, and the estimate for that shape is the kind's, until a shape learned weighs less than a run
// and gives way; a shape of a name too long to keep in the queue's status is never learned.
func TestShapesAreBounded(t *testing.T) {
	l := NewLearner(24*time.Hour, 1)
	for i := range MaxShapesPerQueue {
		l.Observe(Key{Queue: "q", Kind: "Pod", Shape: fmt.Sprintf("cpu=%d", i)}, time.Minute, t0)
	}
	extra := Key{Queue: "q", Kind: "Pod", Shape: "one too many"}
	l.Observe(extra, time.Hour, t0)
	if _, ok := l.byKey[extra]; ok {
		t.Error("the shape beyond the bound was learned")
	}
	if e, ok := l.Estimate(extra, t0); !ok || e.Weight != MaxShapesPerQueue+1 || e.From != (Key{Queue: "q", Kind: "Pod"}) {
		t.Errorf("the shape beyond the bound: %+v, %v; want the kind's %d runs", e, ok, MaxShapesPerQueue+1)
	}
	// A day later each shape of one run weighs less than one run: a new shape takes the place of one
	// of them, not of a shape that ran again since.
	later := t0.Add(24 * time.Hour)
	ranAgain := Key{Queue: "q", Kind: "Pod", Shape: "cpu=0"}
	l.Observe(ranAgain, time.Minute, later.Add(-time.Hour))
	l.Observe(extra, time.Hour, later)
	if _, ok := l.byKey[extra]; !ok || len(l.shapesIn["q"]) != MaxShapesPerQueue {
		t.Errorf("a new shape a day later was not learned in the place of an old one: %d shapes", len(l.shapesIn["q"]))
	}
	if _, ok := l.byKey[ranAgain]; !ok {
		t.Error("the shape that ran again gave way to the new one")
	}
	long := Key{Queue: "other", Kind: "Pod", Shape: strings.Repeat("x", MaxShapeLength+1)}
	l.Observe(long, time.Hour, t0)
	if _, ok := l.byKey[long]; ok {
		t.Error("a shape of a name too long was learned")
	}
	l.Observe(Key{Queue: "other", Kind: "Pod", Shape: "one too many"}, time.Hour, t0)
	if _, ok := l.byKey[Key{Queue: "other", Kind: "Pod", Shape: "one too many"}]; !ok {
		t.Error("another queue's shape was not learned: the bound is per queue")
	}
}

// An estimate says what it stands on: the runs of the key it was read from, those shorter than the
// time run included, and whether the run outlived them all.
func TestEstimateSaysWhatItStandsOn(t *testing.T) {
	l := NewLearner(24*time.Hour, 3)
	key := Key{Queue: "q", Kind: "Pod"}
	for range 6 {
		l.Observe(key, 2*time.Minute, t0)
	}
	for range 2 {
		l.Observe(key, 8*time.Minute, t0)
	}
	l.Observe(Key{Queue: "q", Kind: "Job"}, time.Minute, t0)
	type standsOn struct {
		Runs     float64
		From     Key
		Outlived bool
	}
	for _, tt := range []struct {
		name    string
		key     Key
		elapsed time.Duration
		want    standsOn
	}{
		{name: "from the start", key: key, want: standsOn{Runs: 8, From: key}},
		{name: "past the shorter runs", key: key, elapsed: 3 * time.Minute, want: standsOn{Runs: 8, From: key}},
		{name: "past every run", key: key, elapsed: time.Hour, want: standsOn{Runs: 8, From: key, Outlived: true}},
		{name: "a kind of one run, read from its queue's", key: Key{Queue: "q", Kind: "Job"}, want: standsOn{Runs: 9, From: Key{Queue: "q"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, ok := l.EstimateAfter(tt.key, t0, tt.elapsed)
			if !ok {
				t.Fatal("no estimate")
			}
			if diff := cmp.Diff(tt.want, standsOn{Runs: e.Runs, From: e.From, Outlived: e.Outlived}); diff != "" {
				t.Errorf("(-want,+got):\n%s", diff)
			}
		})
	}
}
