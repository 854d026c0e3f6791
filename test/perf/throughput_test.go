package perf

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// vanillaScheduler is the upstream kube-scheduler with its default profile, run in the same process
// as a second scheduler, so both sides share the machine, the API server and the nodes.
const vanillaScheduler = "default-scheduler"

// limitScheduler is a minimal profile of that scheduler (PrioritySort, SchedulingGates,
// NodeResourcesFit, DefaultBinder): the ceiling the API server and this machine allow.
const limitScheduler = "limit-scheduler"

var throughputNodes = flag.Int("throughput-nodes", 1000, "fake nodes of the throughput case")

// BenchmarkThroughput measures scheduling throughput: -pods 1-CPU pods for the vanilla default
// profile, as many for the queue-scheduler profile spread across -queues queues, and as many for the
// minimal limit profile, are created held by a scheduling gate, then released by 32 clients; the rate
// runs from the first release to the last binding. Each scheduler first schedules -warmup-pods pods
// unmeasured; the order of the measured runs turns with each repeat (vanilla, ours, limit; then ours,
// limit, vanilla; …) so that drift over the run weighs on all alike. It reports the median rates, ours
// over vanilla, and each over the limit, and the process's CPU time a pod while each side schedules:
// the API server's and the other schedulers' idle share are alike for both, so the difference is the
// schedulers'.
func BenchmarkThroughput(b *testing.B) {
	compare(b, "g", true)
}

// BenchmarkEndToEnd is BenchmarkThroughput with the pods created ungated: the rate runs from the
// first creation to the last binding, so it includes the admission of each pod (for queue-scheduler,
// its validating webhook) and the creation itself.
func BenchmarkEndToEnd(b *testing.B) {
	compare(b, "e", false)
}

var warmUpPods = flag.Int("warmup-pods", 500, "pods each scheduler schedules, unmeasured, before a throughput case")

// compare schedules the same pods with each scheduler, -repeat times, in runs named
// <prefix><i>-<r>-<j>, and records the medians and ranges.
func compare(b *testing.B, prefix string, gated bool) {
	ctx := context.Background()
	ns := setUpThroughput(b, ctx)
	schedulers := []string{vanillaScheduler, schedulingv1beta1.SchedulerName, limitScheduler}
	for i := 0; i < b.N; i++ {
		for j, name := range schedulers {
			schedule(b, ctx, ns, fmt.Sprintf("%s%d-warm-%d", prefix, i, j), name, gated, *warmUpPods)
		}
		var vanilla, ours, limit, ratio, vanillaCPU, ourCPU, writes []float64
		for r := range rotations(len(schedulers)) {
			runs := map[string]scheduled{}
			for j := range schedulers {
				name := schedulers[(r+j)%len(schedulers)]
				runs[name] = schedule(b, ctx, ns, fmt.Sprintf("%s%d-%d-%d", prefix, i, r, j), name, gated, *podCount)
			}
			vanilla = append(vanilla, runs[vanillaScheduler].rate)
			ours = append(ours, runs[schedulingv1beta1.SchedulerName].rate)
			limit = append(limit, runs[limitScheduler].rate)
			ratio = append(ratio, runs[schedulingv1beta1.SchedulerName].rate/runs[vanillaScheduler].rate)
			vanillaCPU = append(vanillaCPU, runs[vanillaScheduler].cpuPerPod)
			ourCPU = append(ourCPU, runs[schedulingv1beta1.SchedulerName].cpuPerPod)
			writes = append(writes, runs[schedulingv1beta1.SchedulerName].statusWritesPerPod)
		}
		reportThroughput(b, prefix, spreadOf(vanilla), spreadOf(ours), spreadOf(limit), spreadOf(ratio), spreadOf(vanillaCPU), spreadOf(ourCPU),
			spreadOf(writes))
	}
}

// reportThroughput reports the medians as benchmark metrics and records the table rows: ours
// against vanilla, and both against the limit.
func reportThroughput(b *testing.B, prefix string, vanilla, ours, limit, ratio, vanillaCPU, ourCPU, writes spread) {
	b.ReportMetric(vanilla.median, "vanilla-pods/s")
	b.ReportMetric(ours.median, "queue-pods/s")
	b.ReportMetric(limit.median, "limit-pods/s")
	b.ReportMetric(ratio.median, "ratio")
	b.ReportMetric(ourCPU.median, "queue-cpu-ms/pod")
	b.ReportMetric(vanillaCPU.median, "vanilla-cpu-ms/pod")
	what := map[string]string{"g": "Throughput, scheduling (gated pods released)", "e": "Throughput, end to end (creation to binding)"}[prefix]
	shape := fmt.Sprintf(" — %d nodes, %d pods, %d queues", *throughputNodes, *podCount, *queueCount)
	values := map[string]float64{"vanilla": vanilla.median, "ours": ours.median, "limit": limit.median, "ratio": ratio.median,
		"ratio_lo": ratio.lo, "ratio_hi": ratio.hi, "ours_cpu_ms_per_pod": ourCPU.median, "vanilla_cpu_ms_per_pod": vanillaCPU.median,
		"queue_status_writes_per_pod": writes.median}
	record(row{Case: what + shape, Ours: ours.format(0, " pods/s") + "; process CPU " + ourCPU.format(2, " ms a pod") +
		"; " + writes.format(3, " Queue status writes a pod"),
		Upstream: vanilla.format(0, " pods/s") + "; process CPU " + vanillaCPU.format(2, " ms a pod"),
		Ratio:    ratio.format(3, ""), Target: "≥ 0.95", Values: values})
	record(row{Case: "Limit (minimal profile), " + strings.ToLower(what[:1]) + what[1:], Ours: fmt.Sprintf("%.3f of the limit", ours.median/limit.median),
		Upstream: fmt.Sprintf("%.3f of the limit", vanilla.median/limit.median), Ratio: limit.format(0, " pods/s (limit)"), Target: "—",
		Values: map[string]float64{"limit": limit.median, "ours_of_limit": ours.median / limit.median, "vanilla_of_limit": vanilla.median / limit.median}})
}

// throughputSetUp makes the nodes, queues and namespace of the throughput cases once per process.
var throughputSetUp sync.Once

func setUpThroughput(b *testing.B, ctx context.Context) string {
	const name = "throughput"
	throughputSetUp.Do(func() { createThroughputObjects(b, ctx, name) })
	return name
}

func createThroughputObjects(b *testing.B, ctx context.Context, name string) {
	for i := range *throughputNodes {
		node := util.MakeNode(fmt.Sprintf("tp-node-%d", i), "32", "128Gi")
		if _, err := cluster.Kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	for i := range *queueCount {
		q := util.MakeQueue(fmt.Sprintf("tp-%03d", i)).Obj()
		if _, err := cluster.Queues.SchedulingV1beta1().Queues().Create(ctx, q, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := cluster.Kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
}

// eachIndex runs do for every index below n from 32 clients.
func eachIndex(b *testing.B, n int, do func(i int) error) {
	const clients = 32
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for i := c; i < n; i += clients {
				if err := do(i); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// benchGate holds the pods of a gated run until they are released.
const benchGate = "queue-scheduler.io/benchmark"

// scheduled is how one run went: pods bound per second, and the process's CPU time a pod meanwhile
// in milliseconds.
type scheduled struct{ rate, cpuPerPod, statusWritesPerPod float64 }

// schedule creates n pods for schedulerName from 32 clients and says how fast they were bound:
// gated, from the first release to the last binding; otherwise from the first creation. It deletes
// them afterwards.
func schedule(b *testing.B, ctx context.Context, ns, run, schedulerName string, gated bool, n int) scheduled {
	start := time.Now()
	eachIndex(b, n, func(i int) error {
		made := util.MakePod(ns, fmt.Sprintf("%s-%d", run, i)).SchedulerName(schedulerName).Label("run", run).
			Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"})
		if schedulerName == schedulingv1beta1.SchedulerName {
			// Only queue-scheduler's pods name a queue: a pod that does passes queue-scheduler's
			// admission webhook whatever its scheduler, and the other sides must not pay for it.
			made = made.Label(schedulingv1beta1.QueueLabel, fmt.Sprintf("tp-%03d", i%*queueCount))
		}
		pod := made.Obj()
		if gated {
			pod.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: benchGate}}
		}
		_, err := cluster.Kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		return err
	})
	created := time.Since(start)
	// The bindings are followed on a watch, read while the pods are released: polling lists of
	// every pod would take a share of the machine that grows with the run's length.
	selector := metav1.ListOptions{LabelSelector: "run=" + run}
	list, err := cluster.Kube.CoreV1().Pods(ns).List(ctx, selector)
	if err != nil {
		b.Fatal(err)
	}
	pods := retryWatch(b, ctx, list.ResourceVersion, func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		o.LabelSelector = selector.LabelSelector
		return cluster.Kube.CoreV1().Pods(ns).Watch(ctx, o)
	})
	defer pods.Stop()
	bound := map[string]bool{}
	for _, p := range list.Items {
		if p.Spec.NodeName != "" {
			bound[p.Name] = true
		}
	}
	stopProfile := profileRun(b, run+"-"+schedulerName, n == *podCount)
	defer stopProfile()
	counters, cpuStart := snapshotCounters(), processCPU(b)
	releasing := make(chan struct{})
	go func() {
		defer close(releasing)
		if !gated {
			return
		}
		start = time.Now()
		release := []byte(`[{"op":"remove","path":"/spec/schedulingGates"}]`)
		eachIndex(b, n, func(i int) error {
			_, err := cluster.Kube.CoreV1().Pods(ns).Patch(ctx, fmt.Sprintf("%s-%d", run, i), types.JSONPatchType, release, metav1.PatchOptions{})
			return err
		})
	}()
	waitBound(b, pods.ResultChan(), run, n, bound, func() string { return unboundReason(ctx, cluster.Kube, ns, run) }, func(*v1.Pod) {})
	<-releasing
	elapsed := time.Since(start)
	cpu := processCPU(b) - cpuStart
	stopProfile()
	pods.Stop() // before the deletions, which it would otherwise be sent
	out := scheduled{rate: float64(n) / elapsed.Seconds(), cpuPerPod: float64(cpu.Microseconds()) / 1000 / float64(n),
		statusWritesPerPod: snapshotCounters().queueStatusWrites(counters) / float64(n)}
	logRun(b, "%s %s: created in %.1f s, all bound %.1f s after the start: %.1f pods/s, process CPU %.2f ms a pod; since the creations: %s",
		run, schedulerName, created.Seconds(), elapsed.Seconds(), out.rate, out.cpuPerPod, snapshotCounters().since(counters))
	deleteAllPods(b, ctx, cluster.Kube, ns)
	waitQueuesSettled(b, ctx, cluster.Queues, "tp-")
	return out
}

// deleteAllPods deletes the namespace's pods and waits until they are gone, so that the next run
// does not pay for the deletions. A deletion that outlasts the request's time goes on in the API
// server; it is asked again while pods are left.
func deleteAllPods(b *testing.B, ctx context.Context, kube kubernetes.Interface, ns string) {
	var timedOut error // the last deletion the API server gave up on
	deleteAll := func(ctx context.Context) (bool, error) {
		err := kube.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}, metav1.ListOptions{})
		if apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) {
			timedOut = err
			return false, nil
		}
		timedOut = nil
		return err == nil, err
	}
	done, err := deleteAll(ctx)
	if err != nil {
		b.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil // A busy API server: the next poll lists again.
		}
		if len(list.Items) > 0 && !done {
			done, err = deleteAll(ctx)
		}
		return len(list.Items) == 0, err
	})
	if err != nil && timedOut != nil {
		b.Fatalf("pods of %s not deleted within 5m: %v; the last deletion asked timed out: %v", ns, err, timedOut)
	}
	if err != nil {
		b.Fatalf("pods of %s not deleted within 5m: %v", ns, err)
	}
}
