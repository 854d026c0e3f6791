package perf

import (
	"context"
	"flag"
	"fmt"
	"math"
	"sort"
	"testing"
	"time"

	"github.com/queue-scheduler/queue-scheduler/pkg/queuesim"
)

var scenarioScale = flag.Int("scenario-scale", 1, "multiplies the nodes and the jobs of the fairness and reclaim scenarios")

// playScenario plays one of examples/scenarios, scaled by -scenario-scale, on a control plane of its
// own (queuesim's).
func playScenario(b *testing.B, file string) *queuesim.Result {
	return play(b, loadScenario(b, file))
}

func loadScenario(b *testing.B, file string) *queuesim.Scenario {
	s, err := queuesim.Load("../../examples/scenarios/" + file)
	if err != nil {
		b.Fatal(err)
	}
	scaleScenario(s, *scenarioScale)
	return s
}

func play(b *testing.B, s *queuesim.Scenario) *queuesim.Result {
	result, err := queuesim.Run(context.Background(), s, queuesim.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return result
}

// scaleScenario multiplies the scenario's node counts and job counts by n, with arrivals n times as
// frequent, so that the cluster and its demand grow alike and arrive over the same time.
func scaleScenario(s *queuesim.Scenario, n int) {
	if n <= 1 {
		return
	}
	for i := range s.Nodes {
		s.Nodes[i].Count *= n
	}
	for i := range s.Jobs {
		s.Jobs[i].Count *= n
		s.Jobs[i].Every.Duration /= time.Duration(n)
	}
}

// BenchmarkFairness plays fairness.yaml (weights 1:2:3, demand beyond the cluster) -repeat times:
// the simulated time until every queue is within 5% of its deserved share and stays there, and the
// mean deviation from then on.
func BenchmarkFairness(b *testing.B) {
	for i := 0; i < b.N; i++ {
		var settle, deviation []float64
		for range *repeats {
			at, dev := convergence(playScenario(b, "fairness.yaml"), 0.05)
			settle = append(settle, at.Seconds())
			deviation = append(deviation, 100*dev)
		}
		s, d := spreadOf(settle), spreadOf(deviation)
		b.ReportMetric(s.median, "settle-s")
		b.ReportMetric(d.median, "deviation-%")
		record(row{Case: fmt.Sprintf("Fairness — 3 queues 1:2:3, %d cpu, unlimited demand (simulated time)", 48**scenarioScale),
			Ours: "within 5% after " + s.format(0, " s") + "; then " + d.format(2, "%") + " off", Upstream: "—", Ratio: "—",
			Target: "—", Values: map[string]float64{"settle_s": s.median, "deviation_pct": d.median}})
	}
}

// convergence returns when every queue's allocation came within tolerance of its deserved share for
// good, and the mean relative deviation of the samples after that.
func convergence(r *queuesim.Result, tolerance float64) (time.Duration, float64) {
	byTime := map[time.Duration][]queuesim.Sample{}
	for _, s := range r.Samples {
		byTime[s.At] = append(byTime[s.At], s)
	}
	times := make([]time.Duration, 0, len(byTime))
	for at := range byTime {
		times = append(times, at)
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	settled, worst := time.Duration(-1), make([]float64, len(times))
	for i, at := range times {
		for _, s := range byTime[at] {
			if s.Deserved > 0 {
				worst[i] = math.Max(worst[i], math.Abs(s.Allocated-s.Deserved)/s.Deserved)
			}
		}
		if worst[i] > tolerance || len(byTime[at]) == 0 {
			settled = -1
		} else if settled < 0 {
			settled = at
		}
	}
	if settled < 0 {
		return r.Duration, math.NaN()
	}
	total, n := 0.0, 0
	for i, at := range times {
		if at >= settled {
			total += worst[i]
			n++
		}
	}
	return settled, total / float64(n)
}

// BenchmarkReclaim plays reclaim.yaml (a borrower holds the cluster; the owner submits 1-cpu pods
// from 3m on) -repeat times: the simulated time from the owner's last submission until it holds its
// deserved share, p50 and p99 over the repeats, and evictions per pod reclaimed (ideal 1.0).
func BenchmarkReclaim(b *testing.B) {
	for i := 0; i < b.N; i++ {
		reclaimCase(b, "reclaim.yaml", fmt.Sprintf("Reclaim — borrower holds %d cpu, owner deserves %d (simulated time)",
			32**scenarioScale, 16**scenarioScale))
	}
}

// BenchmarkGangReclaim plays gang-reclaim.yaml (a borrower's 1-cpu pods hold the cluster; the owner
// submits one gang of its deserved share at 2m) as BenchmarkReclaim does: the gang is one preemptor.
func BenchmarkGangReclaim(b *testing.B) {
	for i := 0; i < b.N; i++ {
		reclaimCase(b, "gang-reclaim.yaml", fmt.Sprintf("Gang reclaim — borrower holds %d cpu, owner submits gangs of 4 × 4 cpu, deserves %d (simulated time)",
			32**scenarioScale, 16**scenarioScale))
	}
}

// reclaimCase plays a scenario in which the queue "owner" submits against a borrower of 1-cpu pods,
// sampled every simulated second, and records the time from the owner's last submission (its demand
// complete) until it holds its share, and the borrower's evictions per cpu reclaimed: with 1-cpu
// victims, evictions per victim needed (ideal 1.0), whatever the size of the owner's pods.
func reclaimCase(b *testing.B, file, title string) {
	var took, perPod []float64
	for range *repeats {
		s := loadScenario(b, file)
		s.Sample.Duration = time.Second
		complete := demandComplete(s, "owner")
		r := play(b, s)
		took = append(took, (reachedShare(r, "owner") - complete).Seconds())
		owner, _ := r.Queue("owner")
		borrower, _ := r.Queue("borrower")
		perPod = append(perPod, float64(borrower.Evictions)/math.Max(owner.FinalAllocated, 1))
	}
	t, e := spreadOf(took), spreadOf(perPod)
	p99 := percentileOf(took, 0.99)
	b.ReportMetric(t.median, "p50-s")
	b.ReportMetric(e.median, "evictions/pod")
	record(row{Case: title,
		Ours: fmt.Sprintf("owner at its share p50 %.0f s, p99 %.0f s after its demand is complete (1 s samples); %s evictions per victim needed (1-cpu victims)",
			t.median, p99, e.format(2, "")),
		Upstream: "—", Ratio: "—", Target: "evictions per victim needed 1.0",
		Values: map[string]float64{"p50_s": t.median, "p99_s": p99, "evictions_per_pod": e.median}})
}

// demandComplete is when the queue's last job of the scenario is submitted.
func demandComplete(s *queuesim.Scenario, queue string) time.Duration {
	var last time.Duration
	for _, j := range s.Jobs {
		if j.Queue == queue {
			last = max(last, j.At.Duration+time.Duration(max(j.Count-1, 0))*j.Every.Duration)
		}
	}
	return last
}

// reachedShare is the first sample at which the queue holds its deserved share.
func reachedShare(r *queuesim.Result, queue string) time.Duration {
	for _, s := range r.Samples {
		if s.Queue == queue && s.Deserved > 0 && s.Allocated >= s.Deserved {
			return s.At
		}
	}
	return r.Duration
}

// percentileOf is the p-th quantile (0–1) of xs, the nearest rank.
func percentileOf(xs []float64, p float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[int(math.Ceil(p*float64(len(s))))-1]
}
