package perf

import (
	"bufio"
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/manifests"
	"github.com/queue-scheduler/queue-scheduler/pkg/localcluster"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

var (
	memoryNodes  = flag.Int("memory-nodes", 5000, "fake nodes of the memory case")
	memoryPods   = flag.Int("memory-pods", 10000, "pods each scheduler schedules in the memory case")
	memoryQueues = flag.Int("memory-queues", 1000, "queues of the memory case")
	heapProfiles = flag.String("memory-heap-profiles", "", "folder for each memory run's heap profiles, taken from the scheduler's /debug/pprof/heap once half of its pods and once all are bound, and its output with the GC trace; none when empty")
)

const memoryNamespace = "memory"

// schedulerProcess is a scheduler binary and the profile it runs in the memory case.
type schedulerProcess struct {
	name, binary, schedulerName string
	profile                     []byte
	// webhook: the profile's QueueState plugin serves its admission webhook.
	webhook bool
}

// memoryUse is what the operating system and the Go runtime said about one run of a scheduler.
type memoryUse struct {
	peakRSS  float64 // MiB, the process's maximum resident set
	peakHeap float64 // MiB, the largest heap at the start of a garbage collection
	liveHeap float64 // MiB, the largest heap marked live by a garbage collection
}

// BenchmarkMemory runs each scheduler as a process of its own — the queue-scheduler binary with its
// profile, the upstream kube-scheduler binary with the default profile — on one control plane of
// -memory-nodes nodes and -memory-queues queues, and has it schedule -memory-pods 1-CPU pods (ours
// spread across the queues). It reports the peak resident set (the kernel's maximum RSS of the
// process) and the peak heap (from the Go runtime's GC trace), and ours over upstream. The order of
// the two turns with each repeat, an even number of repeats (rotations).
func BenchmarkMemory(b *testing.B) {
	ctx := context.Background()
	bin := b.TempDir()
	ours := schedulerProcess{name: "queue-scheduler", binary: filepath.Join(bin, "queue-scheduler"),
		schedulerName: schedulingv1beta1.SchedulerName, profile: manifests.SchedulerConfig, webhook: true}
	upstream := schedulerProcess{name: "kube-scheduler", binary: filepath.Join(bin, "kube-scheduler"), schedulerName: vanillaScheduler,
		profile: fmt.Appendf(nil, "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: %s\n", vanillaScheduler)}
	goBuild(b, ours.binary, "github.com/queue-scheduler/queue-scheduler/cmd/queue-scheduler")
	goBuild(b, upstream.binary, "k8s.io/kubernetes/cmd/kube-scheduler")
	c, err := localcluster.Start(ctx, localcluster.Options{WithoutScheduler: true})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Stop()
	setUpMemory(b, ctx, c)
	sides := []schedulerProcess{upstream, ours}
	for i := 0; i < b.N; i++ {
		measured := map[string][]memoryUse{}
		for r := range rotations(len(sides)) {
			for j := range sides {
				side := sides[(r+j)%len(sides)]
				measured[side.name] = append(measured[side.name], runForMemory(b, ctx, c, side, fmt.Sprintf("m%d-%d", i, r)))
			}
		}
		reportMemory(b, measured[ours.name], measured[upstream.name])
	}
}

// goBuild builds a main package of this module's build list into out.
func goBuild(b *testing.B, out, pkg string) {
	cmd := exec.Command("go", "build", "-o", out, pkg)
	if output, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build %s: %v\n%s", pkg, err, output)
	}
}

func setUpMemory(b *testing.B, ctx context.Context, c *localcluster.Cluster) {
	populate(b, ctx, c, "mem-node-", *memoryNodes, memoryQueue, *memoryQueues, memoryNamespace)
}

func memoryQueue(i int) string { return fmt.Sprintf("mem-%04d", i%*memoryQueues) }

// runForMemory starts the scheduler process, creates the pods, waits until all are bound, stops the
// process and reads its memory use; then deletes the pods.
func runForMemory(b *testing.B, ctx context.Context, c *localcluster.Cluster, side schedulerProcess, run string) memoryUse {
	dir := b.TempDir()
	var serving localcluster.Serving
	if side.webhook {
		serving = localcluster.Serving{Webhook: loopbackAddr(b), Visibility: loopbackAddr(b)}
	}
	config, err := localcluster.WriteSchedulerConfig(side.profile, c.Kubeconfig, filepath.Join(dir, "config.yaml"), serving)
	if err != nil {
		b.Fatal(err)
	}
	logPath := filepath.Join(dir, "stderr.log")
	if *heapProfiles != "" {
		logPath = filepath.Join(*heapProfiles, fmt.Sprintf("%s-%s.log", side.name, run))
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = logFile.Close() }()
	args := []string{"--config", config, "--secure-port", "0"}
	port, godebug := "", "GODEBUG=gctrace=1"
	if *heapProfiles != "" {
		// A heap profile samples one allocation per 512 KiB by default: too coarse to tell the two
		// schedulers' per-queue and per-pod costs apart.
		godebug += ",memprofilerate=8192"
		_, port, _ = net.SplitHostPort(loopbackAddr(b))
		// Profiling is on by default; the flags let an anonymous local request read it.
		args = []string{"--config", config, "--bind-address", "127.0.0.1", "--secure-port", port,
			"--authorization-always-allow-paths", "/healthz,/readyz,/livez,/debug/pprof/*"}
	}
	cmd := exec.Command(side.binary, args...)
	cmd.Env = append(os.Environ(), godebug)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	createMemoryPods(b, ctx, c, side, run)
	halfway := func() {}
	if port != "" {
		halfway = func() {
			saveHeapProfile(b, port, filepath.Join(*heapProfiles, fmt.Sprintf("%s-%s-half.pb.gz", side.name, run)))
		}
	}
	waitAllBound(b, ctx, c, run, *memoryPods, func() string { return "scheduler output in " + logPath }, halfway)
	took := time.Since(start)
	use := memoryUse{peakRSS: peakRSS(b, cmd.Process.Pid)}
	if port != "" {
		saveHeapProfile(b, port, filepath.Join(*heapProfiles, fmt.Sprintf("%s-%s.pb.gz", side.name, run)))
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		b.Fatal(err)
	}
	_ = cmd.Wait()
	if use.peakHeap, use.liveHeap, err = gcTracePeaks(logPath); err != nil {
		b.Fatal(err)
	}
	logRun(b, "%s %s: %d pods in %.1f s; peak RSS %.0f MiB, peak heap %.0f MiB, largest live heap %.0f MiB",
		run, side.name, *memoryPods, took.Seconds(), use.peakRSS, use.peakHeap, use.liveHeap)
	deleteAllPods(b, ctx, c.Kube, memoryNamespace)
	return use
}

// saveHeapProfile writes the heap profile the scheduler serving on 127.0.0.1:port reports, after a
// garbage collection, to path.
func saveHeapProfile(b *testing.B, port, path string) {
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{
		// The scheduler serves a self-signed certificate; this reads a local debugging endpoint.
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec
	}}
	resp, err := client.Get("https://127.0.0.1:" + port + "/debug/pprof/heap?gc=1")
	if err != nil {
		b.Fatalf("heap profile: %v", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("heap profile: %s", resp.Status)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		b.Fatal(err)
	}
	out, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = out.Close() }()
	if _, err := io.Copy(out, resp.Body); err != nil {
		b.Fatalf("heap profile: %v", err)
	}
}

// loopbackAddr is a free loopback address for a webhook server.
func loopbackAddr(b *testing.B) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String()
}

func createMemoryPods(b *testing.B, ctx context.Context, c *localcluster.Cluster, side schedulerProcess, run string) {
	eachIndex(b, *memoryPods, func(i int) error {
		pod := util.MakePod(memoryNamespace, fmt.Sprintf("%s-%d", run, i)).SchedulerName(side.schedulerName).Label("run", run).
			Label(schedulingv1beta1.QueueLabel, memoryQueue(i)).Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()
		_, err := c.Kube.CoreV1().Pods(memoryNamespace).Create(ctx, pod, metav1.CreateOptions{})
		return err
	})
}

// waitAllBound polls, from the API server's watch cache, until n pods of the run are bound; halfway
// is called once when half of them are.
func waitAllBound(b *testing.B, ctx context.Context, c *localcluster.Cluster, run string, n int, where func() string, halfway func()) {
	bound, half := 0, sync.OnceFunc(halfway)
	err := wait.PollUntilContextTimeout(ctx, time.Second, *bindTimeout, true, func(ctx context.Context) (bool, error) {
		list, err := c.Kube.CoreV1().Pods(memoryNamespace).List(ctx, metav1.ListOptions{LabelSelector: "run=" + run, ResourceVersion: "0"})
		if err != nil {
			return false, nil
		}
		bound = 0
		for _, p := range list.Items {
			if p.Spec.NodeName != "" {
				bound++
			}
		}
		if 2*bound >= n {
			half()
		}
		return bound == n, nil
	})
	if err != nil {
		b.Fatalf("%s: %d of %d pods bound after %s; %s", run, bound, n, *bindTimeout, where())
	}
}

// peakRSS is the process's resident set high-water mark in MiB (VmHWM). The kernel's ru_maxrss would
// not do: it counts the test process's pages shared with the child between fork and exec.
func peakRSS(b *testing.B, pid int) float64 {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^VmHWM:\s+(\d+) kB`).FindSubmatch(status)
	if m == nil {
		b.Fatalf("no VmHWM in /proc/%d/status", pid)
	}
	kib, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		b.Fatal(err)
	}
	return kib / 1024
}

// gcTraceHeap matches the heap sizes of a gctrace line: at the start of the GC, at its end, and
// marked live ("…, 412->418->201 MB, …").
var gcTraceHeap = regexp.MustCompile(`^gc \d+ .* (\d+)->(\d+)->(\d+) MB`)

// gcTracePeaks reads the largest heap the runtime reported at the start or end of a GC, and the
// largest live heap, in MiB.
func gcTracePeaks(logPath string) (peak, live float64, err error) {
	f, err := os.Open(logPath)
	if err != nil {
		return 0, 0, err
	}
	defer func() { _ = f.Close() }()
	lines := bufio.NewScanner(f)
	lines.Buffer(make([]byte, 1<<20), 1<<20)
	for lines.Scan() {
		m := gcTraceHeap.FindStringSubmatch(lines.Text())
		if m == nil {
			continue
		}
		atStart, _ := strconv.ParseFloat(m[1], 64)
		atEnd, _ := strconv.ParseFloat(m[2], 64)
		marked, _ := strconv.ParseFloat(m[3], 64)
		peak, live = max(peak, atStart, atEnd), max(live, marked)
	}
	if err := lines.Err(); err != nil {
		return 0, 0, err
	}
	if peak == 0 {
		return 0, 0, fmt.Errorf("no GC trace in %s", logPath)
	}
	return peak, live, nil
}

// reportMemory records the row: peak RSS and heap of each side and ours over upstream.
func reportMemory(b *testing.B, ours, upstream []memoryUse) {
	pick := func(uses []memoryUse, f func(memoryUse) float64) spread {
		var xs []float64
		for _, u := range uses {
			xs = append(xs, f(u))
		}
		return spreadOf(xs)
	}
	rss := func(u memoryUse) float64 { return u.peakRSS }
	heap := func(u memoryUse) float64 { return u.peakHeap }
	var ratio []float64
	for r := range ours {
		ratio = append(ratio, ours[r].peakRSS/upstream[r].peakRSS)
	}
	describe := func(uses []memoryUse) string {
		return fmt.Sprintf("peak RSS %s, peak heap %s", pick(uses, rss).format(0, " MiB"), pick(uses, heap).format(0, " MiB"))
	}
	rs := spreadOf(ratio)
	b.ReportMetric(pick(ours, rss).median, "queue-rss-MiB")
	b.ReportMetric(pick(upstream, rss).median, "upstream-rss-MiB")
	b.ReportMetric(rs.median, "ratio")
	record(row{Case: fmt.Sprintf("Memory — %d nodes, %d pods, %d queues, each scheduler its own process", *memoryNodes, *memoryPods, *memoryQueues),
		Ours: describe(ours), Upstream: describe(upstream), Ratio: rs.format(2, "") + " (RSS)", Target: "≤ 1.10",
		Values: map[string]float64{
			"ours_rss_mib": pick(ours, rss).median, "ours_heap_mib": pick(ours, heap).median,
			"upstream_rss_mib": pick(upstream, rss).median, "upstream_heap_mib": pick(upstream, heap).median, "ratio": rs.median,
		}})
}
