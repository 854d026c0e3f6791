package schedperf

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	perf "k8s.io/kubernetes/test/integration/scheduler_perf"
	"sigs.k8s.io/yaml"

	"github.com/queue-scheduler/queue-scheduler/apis/config"
	"github.com/queue-scheduler/queue-scheduler/pkg/controller"
	"github.com/queue-scheduler/queue-scheduler/pkg/embedded"
	"github.com/queue-scheduler/queue-scheduler/pkg/localcluster"
	"github.com/queue-scheduler/queue-scheduler/pkg/scheduler"
)

var (
	repeats  = flag.Int("repeat", 3, "runs of every workload on each side; the order of the sides turns with each run")
	benchOut = flag.String("bench-out", "", "directory for the ratio table (schedperf.md) and scheduler_perf's data items; default out/bench at the module root")
)

// ourSuffix names a test case's twin that runs with the queue-scheduler profile.
const ourSuffix = "_QueueScheduler"

// BenchmarkPerfSchedulingQueueScheduler runs config/workloads.yaml with upstream's scheduler_perf
// -repeat times and writes the ratio of the queue-scheduler twins' throughput to upstream's.
func BenchmarkPerfSchedulingQueueScheduler(b *testing.B) {
	ours, err := os.Getwd()
	if err != nil {
		b.Fatal(err)
	}
	out := *benchOut
	if out == "" {
		out = filepath.Join(ours, "..", "..", "out", "bench")
	}
	upstream := upstreamDir(b)
	for name := range scheduler.Plugins(scheduler.NewRoot(nil)) {
		perf.PluginNames = append(perf.PluginNames, name)
	}
	var runs []map[string]measure
	for r := range *repeats {
		cfg := writeConfig(b, ours, r%2 == 1)
		items := filepath.Join(out, "schedperf", fmt.Sprint("run-", r))
		if err := os.RemoveAll(items); err != nil {
			b.Fatal(err)
		}
		if err := flag.Set("data-items-dir", items); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprint("run-", r), func(b *testing.B) {
			b.Chdir(filepath.Join(upstream, "misc"))
			perf.RunBenchmarkPerfScheduling(b, cfg, "queue-scheduler", registry())
		})
		runs = append(runs, readMeasures(b, items))
	}
	table := ratioTable(runs)
	b.Log("\n" + table)
	if err := os.WriteFile(filepath.Join(out, "schedperf.md"), []byte(table), 0o644); err != nil {
		b.Fatal(err)
	}
}

// upstreamDir is scheduler_perf's directory in the module cache: its workloads name their
// templates relative to it.
func upstreamDir(b *testing.B) string {
	dir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "k8s.io/kubernetes").Output()
	if err != nil {
		b.Fatalf("locate k8s.io/kubernetes: %v", err)
	}
	return filepath.Join(strings.TrimSpace(string(dir)), "test", "integration", "scheduler_perf")
}

// writeConfig writes the workloads with this package's paths filled in, the queue-scheduler twin of
// each test case first when ourFirst, and returns the file's path.
func writeConfig(b *testing.B, ours string, ourFirst bool) string {
	raw, err := os.ReadFile(filepath.Join(ours, "config", "workloads.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	var cases []map[string]any
	if err := yaml.Unmarshal([]byte(strings.ReplaceAll(string(raw), "$OURS", ours)), &cases); err != nil {
		b.Fatalf("config/workloads.yaml: %v", err)
	}
	if ourFirst {
		for i := 0; i+1 < len(cases); i += 2 {
			cases[i], cases[i+1] = cases[i+1], cases[i]
		}
	}
	data, err := yaml.Marshal(cases)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "workloads.yaml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

// registry is the queue-scheduler plugins on one root, each starting, before it is built, what the
// binary runs beside them: the queue CRDs (which an install applies), and the embedded controller,
// which creates the default queue, once per scheduler. Admission is not part of scheduler_perf's
// control plane, so the webhook is off.
func registry() frameworkruntime.Registry {
	root := scheduler.NewRoot(nil)
	r := frameworkruntime.Registry{}
	for name, factory := range scheduler.Plugins(root) {
		r[name] = func(ctx context.Context, args runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
			if err := startEmbedded(ctx, root, h); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			return factory(ctx, args, h)
		}
	}
	return r
}

func startEmbedded(ctx context.Context, root *scheduler.Root, h fwk.Handle) error {
	if err := localcluster.InstallCRDs(ctx, h.KubeConfig()); err != nil {
		return err
	}
	args, err := config.Decode(nil, config.DefaultNamespace())
	if err != nil {
		return err
	}
	args.Webhook.Disabled = true
	return root.StartEmbedded(ctx, h.SharedInformerFactory(), embedded.Config{KubeConfig: h.KubeConfig(), Client: h.ClientSet(),
		Args: args, Lease: controller.DefaultLeaderElection(args.Controller.LeaseNamespace)})
}

// dataItems is the part of scheduler_perf's data items file read here.
type dataItems struct {
	DataItems []struct {
		Data   map[string]float64 `json:"data"`
		Labels map[string]string  `json:"labels"`
	} `json:"dataItems"`
}

// measure is what one run of a workload measured: scheduler_perf's average throughput (the mean of
// its per-second samples) and the time to schedule the measured pods.
type measure struct {
	throughput, seconds float64
}

// readMeasures returns what every test case and workload of one run measured, keyed
// "testcase/workload".
func readMeasures(b *testing.B, dir string) map[string]measure {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		b.Fatalf("no data items in %s: %v", dir, err)
	}
	got := map[string]measure{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		var items dataItems
		if err := json.Unmarshal(raw, &items); err != nil {
			b.Fatalf("%s: %v", f, err)
		}
		for _, item := range items.DataItems {
			parts := strings.Split(item.Labels["Name"], "/")
			if len(parts) < 3 {
				continue
			}
			key := parts[len(parts)-3] + "/" + parts[len(parts)-2]
			m := got[key]
			switch item.Labels["Metric"] {
			case "SchedulingThroughput":
				m.throughput = item.Data["Average"]
			case "SchedulingDuration":
				m.seconds = item.Data["Duration"]
			default:
				continue
			}
			got[key] = m
		}
	}
	return got
}

// ratioTable pairs every workload with its queue-scheduler twin: per side the median over the runs
// of the average throughput and of the time to schedule the measured pods, and the medians of the
// runs' ratios (ours over upstream's throughput; upstream's time over ours), with ranges.
func ratioTable(runs []map[string]measure) string {
	var keys []string
	for key := range runs[0] {
		if tc, w, ok := strings.Cut(key, "/"); ok && !strings.HasSuffix(tc, ourSuffix) {
			if _, twin := runs[0][tc+ourSuffix+"/"+w]; twin {
				keys = append(keys, key)
			}
		}
	}
	sort.Strings(keys)
	var s strings.Builder
	s.WriteString("| scheduler_perf workload | queue-scheduler | upstream | ratio (throughput) | ratio (time) |\n|---|---|---|---|---|\n")
	for _, key := range keys {
		tc, w, _ := strings.Cut(key, "/")
		var theirs, mine, theirTime, myTime, ratios, timeRatios []float64
		for _, run := range runs {
			u, q := run[key], run[tc+ourSuffix+"/"+w]
			theirs, mine = append(theirs, u.throughput), append(mine, q.throughput)
			theirTime, myTime = append(theirTime, u.seconds), append(myTime, q.seconds)
			if u.throughput > 0 {
				ratios = append(ratios, q.throughput/u.throughput)
			}
			if q.seconds > 0 {
				timeRatios = append(timeRatios, u.seconds/q.seconds)
			}
		}
		fmt.Fprintf(&s, "| %s | %s pods/s, %s s | %s pods/s, %s s | %s | %s |\n", key, spread(mine, 0), spread(myTime, 1),
			spread(theirs, 0), spread(theirTime, 1), spread(ratios, 3), spread(timeRatios, 3))
	}
	return s.String()
}

// spread formats the median of values and their range.
func spread(values []float64, decimals int) string {
	if len(values) == 0 {
		return "—"
	}
	v := append([]float64(nil), values...)
	sort.Float64s(v)
	f := "%." + fmt.Sprint(decimals) + "f"
	return fmt.Sprintf(f+" ("+f+"–"+f+")", v[len(v)/2], v[0], v[len(v)-1])
}
