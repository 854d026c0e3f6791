package perf

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/queue-scheduler/queue-scheduler/pkg/queuesim"
)

// The arithmetic and the output of the benchmark harness, checked without a cluster (go test runs
// these when no benchmark is asked for).

func TestSpreadOf(t *testing.T) {
	odd := spreadOf([]float64{285, 200, 229})
	if odd != (spread{median: 229, lo: 200, hi: 285}) || odd.format(0, "") != "229 (200–285)" {
		t.Errorf("odd: got %+v, %q", odd, odd.format(0, ""))
	}
	if even := spreadOf([]float64{4, 1, 2, 3}); even.median != 2.5 {
		t.Errorf("even: median %v, want 2.5", even.median)
	}
	if one := spreadOf([]float64{0.9}); one.format(3, "") != "0.900" {
		t.Errorf("one repeat: %q, want no range", one.format(3, ""))
	}
	if empty := spreadOf(nil); empty != (spread{}) {
		t.Errorf("no repeats: %+v", empty)
	}
}

func TestWriteResults(t *testing.T) {
	saved, dir := *outDir, t.TempDir()
	*outDir = dir
	t.Cleanup(func() { *outDir = saved; results.rows = nil })
	record(row{Case: "Throughput", Ours: "217 pods/s", Upstream: "212 pods/s", Ratio: "0.999", Target: "≥ 0.9", Values: map[string]float64{"ratio": 0.999}})
	var out bytes.Buffer
	if err := writeResults(&out); err != nil {
		t.Fatal(err)
	}
	want := "| case | queue-scheduler | upstream | ratio | target |\n|---|---|---|---|---|\n| Throughput | 217 pods/s | 212 pods/s | 0.999 | ≥ 0.9 |\n"
	if out.String() != "\n"+want {
		t.Errorf("printed table:\n%s\nwant:\n%s", out.String(), want)
	}
	if md, err := os.ReadFile(filepath.Join(dir, "results.md")); err != nil || string(md) != want {
		t.Errorf("results.md = %q, %v", md, err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "results.json"))
	var rows []row
	if err != nil || json.Unmarshal(raw, &rows) != nil || len(rows) != 1 || rows[0].Values["ratio"] != 0.999 {
		t.Errorf("results.json = %s, %v", raw, err)
	}
}

func TestGCTracePeaks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stderr.log")
	trace := strings.Join([]string{
		"I1121 20:00:00.000000 1 server.go:1] Starting Kubernetes Scheduler",
		"gc 1 @0.012s 2%: 0.011+0.5+0.003 ms clock, 0.022+0.1/0.4/0+0.006 ms cpu, 4->5->2 MB, 4 MB goal, 0 MB stacks, 0 MB globals, 2 P",
		"gc 2 @1.500s 3%: 0.02+1.1+0.01 ms clock, 0.04+0.3/1.0/0+0.02 ms cpu, 230->236->118 MB, 240 MB goal, 0 MB stacks, 0 MB globals, 2 P",
		"gc 3 @2.100s 3%: 0.02+1.1+0.01 ms clock, 0.04+0.3/1.0/0+0.02 ms cpu, 200->201->90 MB, 236 MB goal, 0 MB stacks, 0 MB globals, 2 P",
	}, "\n")
	if err := os.WriteFile(path, []byte(trace), 0o600); err != nil {
		t.Fatal(err)
	}
	peak, live, err := gcTracePeaks(path)
	if err != nil || peak != 236 || live != 118 {
		t.Errorf("got peak %v, live %v, %v; want 236, 118", peak, live, err)
	}
	if err := os.WriteFile(path, []byte("no gc lines\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := gcTracePeaks(path); err == nil {
		t.Error("a log without a GC trace gave no error")
	}
}

func TestConvergence(t *testing.T) {
	sample := func(at time.Duration, queue string, allocated, deserved float64) queuesim.Sample {
		return queuesim.Sample{At: at, Queue: queue, Allocated: allocated, Deserved: deserved}
	}
	r := &queuesim.Result{Duration: time.Minute, Samples: []queuesim.Sample{
		sample(0, "a", 0, 8), sample(0, "b", 16, 16),
		sample(10*time.Second, "a", 8, 8), sample(10*time.Second, "b", 16, 16),
		sample(20*time.Second, "a", 6, 8), sample(20*time.Second, "b", 16, 16), // a leaves the band again
		sample(30*time.Second, "a", 8.2, 8), sample(30*time.Second, "b", 16, 16),
		sample(40*time.Second, "a", 8, 8), sample(40*time.Second, "b", 15.6, 16),
	}}
	at, dev := convergence(r, 0.05)
	if at != 30*time.Second || math.Abs(dev-0.025) > 1e-9 {
		t.Errorf("settled at %v with deviation %v; want 30s and 0.025", at, dev)
	}
	never := &queuesim.Result{Duration: time.Minute, Samples: []queuesim.Sample{sample(0, "a", 0, 8)}}
	if at, dev := convergence(never, 0.05); at != time.Minute || !math.IsNaN(dev) {
		t.Errorf("never settled: got %v, %v; want the whole run and NaN", at, dev)
	}
}

func TestScaleScenario(t *testing.T) {
	s := &queuesim.Scenario{
		Nodes: []queuesim.NodeGroup{{Name: "node", Count: 3}},
		Jobs:  []queuesim.JobStream{{Name: "j", Count: 48, Every: queuesim.Duration{Duration: time.Second}}},
	}
	scaleScenario(s, 10)
	if s.Nodes[0].Count != 30 || s.Jobs[0].Count != 480 || s.Jobs[0].Every.Duration != 100*time.Millisecond {
		t.Errorf("scaled by 10: nodes %d, jobs %d every %v", s.Nodes[0].Count, s.Jobs[0].Count, s.Jobs[0].Every.Duration)
	}
	scaleScenario(s, 1)
	if s.Nodes[0].Count != 30 {
		t.Errorf("scale 1 changed the scenario: %d nodes", s.Nodes[0].Count)
	}
}

func TestGangResult(t *testing.T) {
	start := time.Now()
	released := []time.Time{start.Add(time.Second), start.Add(2 * time.Second)}
	bound := []time.Time{start.Add(3 * time.Second), start.Add(4 * time.Second)}
	r := gangResult(start, released, bound)
	if want := float64(2**gangSize) / 4; r.rate != want || r.perGang[0] != 2*time.Second || r.perGang[1] != 2*time.Second {
		t.Errorf("got rate %v, per gang %v; want %v pods/s and 2s each", r.rate, r.perGang, want)
	}
}
