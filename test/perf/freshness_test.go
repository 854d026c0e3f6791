package perf

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// podMilliCPU is each pod's request; the queue status shows a pod once allocated reaches its share.
const podMilliCPU = 100

// reader is how a freshness case reads the queues.
type reader int

const (
	// byStatus reads the Queues' status, through a watch of Queues.
	byStatus reader = iota
	// byWatch reads the live view through a watch of queuesummaries, as kubectl get -w does.
	byWatch
	// byList reads the live view by listing queuesummaries back to back.
	byList
)

// BenchmarkQueueStatusFreshness measures the time from a pod being bound to its queue's status
// showing it in status.allocated, over -pods pods spread across -queues queues: p50 and p99.
func BenchmarkQueueStatusFreshness(b *testing.B) {
	benchmarkFreshness(b, "Queue status freshness", "what the pace allows (a write a queue every 5 s, 5 a second in all)", byStatus)
}

// BenchmarkLiveViewFreshness measures the time from a pod being bound to a watch of the live view's
// queue summaries, through the API server's aggregation layer, being sent its queue's summary that
// shows it (allocated): p50 and p99, and the Queue status writes the run caused.
func BenchmarkLiveViewFreshness(b *testing.B) {
	benchmarkFreshness(b, "Live view freshness, watched", "p99 < 100 ms", byWatch)
}

// BenchmarkLiveViewReadFreshness is the same, read by lists of every queue summary back to back:
// each binding waits for the list under way and the next.
func BenchmarkLiveViewReadFreshness(b *testing.B) {
	benchmarkFreshness(b, "Live view freshness, listed back to back", "—", byList)
}

func benchmarkFreshness(b *testing.B, name, target string, by reader) {
	ctx := context.Background()
	ns := setUpFreshness(b)
	for i := 0; i < b.N; i++ {
		var p50, p99, writes, perPod, cpu []float64
		for r := range *repeats {
			startClean(b, ctx, ns, by)
			run := measureFreshness(b, ctx, ns, fmt.Sprintf("run%d-%d", i, r), by)
			p50 = append(p50, percentile(run.latencies, 0.50).Seconds()*1000)
			p99 = append(p99, percentile(run.latencies, 0.99).Seconds()*1000)
			writes = append(writes, float64(run.writes)/run.elapsed.Seconds())
			perPod = append(perPod, float64(run.writes)/float64(*podCount))
			cpu = append(cpu, run.cpu.Seconds()*1000/float64(*podCount))
		}
		p50s, p99s := spreadOf(p50), spreadOf(p99)
		b.ReportMetric(p50s.median, "p50-ms")
		b.ReportMetric(p99s.median, "p99-ms")
		record(row{Case: fmt.Sprintf("%s — %d queues, %d pods", name, *queueCount, *podCount),
			Ours: "p50 " + p50s.format(0, " ms") + ", p99 " + p99s.format(0, " ms") + "; " + spreadOf(writes).format(0, " status writes/s") +
				", " + spreadOf(perPod).format(3, " a pod") + "; process CPU " + spreadOf(cpu).format(1, " ms a pod"),
			Upstream: "—", Ratio: "—", Target: target,
			Values: map[string]float64{"p50_ms": p50s.median, "p99_ms": p99s.median, "writes_per_s": spreadOf(writes).median,
				"writes_per_pod": spreadOf(perPod).median, "cpu_ms_per_pod": spreadOf(cpu).median}})
	}
	startClean(b, ctx, ns, by)
}

// freshnessSetUp makes the nodes, queues and namespace of the freshness cases once per process.
var freshnessSetUp sync.Once

func setUpFreshness(b *testing.B) string {
	const name = "freshness"
	freshnessSetUp.Do(func() { createFreshnessObjects(b, name) })
	return name
}

func createFreshnessObjects(b *testing.B, name string) {
	ctx := context.Background()
	for i := range *nodeCount {
		node := util.MakeNode(fmt.Sprintf("fresh-node-%d", i), "64", "256Gi")
		if _, err := cluster.Kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	for i := range *queueCount {
		if _, err := cluster.Queues.SchedulingV1beta1().Queues().Create(ctx, util.MakeQueue(queueName(i)).Obj(), metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := cluster.Kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
}

func queueName(i int) string { return fmt.Sprintf("fresh-%03d", i) }

// startClean deletes the pods of an earlier repeat and waits until every queue shows nothing
// allocated (in its status, or in the live view), so that a repeat pairs its binds with readings of
// its own.
func startClean(b *testing.B, ctx context.Context, ns string, by reader) {
	deleteAllPods(b, ctx, cluster.Kube, ns)
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		allocated := map[string]int64{}
		if by != byStatus {
			list, err := cluster.Queues.VisibilityV1beta1().QueueSummaries().List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, nil
			}
			for _, s := range list.Items {
				allocated[s.Name] = s.Allocated.Cpu().MilliValue()
			}
		} else {
			list, err := cluster.Queues.SchedulingV1beta1().Queues().List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, nil
			}
			for _, q := range list.Items {
				allocated[q.Name] = q.Status.Allocated.Cpu().MilliValue()
			}
		}
		for name, milli := range allocated {
			if milli > 0 && strings.HasPrefix(name, "fresh-") {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		b.Fatal("the queues still show pods of an earlier repeat after 10m")
	}
}

// freshnessRun is what one run measured: every pod's latency, the queue status writes seen (each
// write of a queue's status is one watch event) and the CPU time of the whole process (API server and
// etcd included), from the first creation to the last pod seen in its queue's status.
type freshnessRun struct {
	latencies []time.Duration
	writes    int
	elapsed   time.Duration
	cpu       time.Duration
}

// measureFreshness creates the pods and pairs every bind with the first queue status that counts it,
// or the first reading of the live view that counts it.
func measureFreshness(b *testing.B, ctx context.Context, ns, run string, by reader) freshnessRun {
	t := newFreshnessTracker()
	existing, err := cluster.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range existing.Items {
		t.bound[p.Name] = true
	}
	before, err := cluster.Queues.SchedulingV1beta1().Queues().List(ctx, metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for _, q := range before.Items {
		t.offset[q.Name] = int(q.Status.Allocated.Cpu().MilliValue() / podMilliCPU)
	}
	var views <-chan []visibilityv1beta1.QueueSummary
	if by != byStatus {
		summaries, err := cluster.Queues.VisibilityV1beta1().QueueSummaries().List(ctx, metav1.ListOptions{})
		if err != nil {
			b.Fatal(err)
		}
		for _, s := range summaries.Items {
			t.offset[s.Name] = int(s.Allocated.Cpu().MilliValue() / podMilliCPU)
		}
		readCtx, stop := context.WithCancel(ctx)
		defer stop()
		if by == byWatch {
			views = watchViews(b, readCtx, summaries.ResourceVersion)
		} else {
			views = readViews(b, readCtx)
		}
	}
	pods := retryWatch(b, ctx, existing.ResourceVersion, cluster.Kube.CoreV1().Pods(ns).Watch)
	defer pods.Stop()
	queues := retryWatch(b, ctx, before.ResourceVersion, cluster.Queues.SchedulingV1beta1().Queues().Watch)
	defer queues.Stop()
	b.ResetTimer()
	start, cpuStart := time.Now(), processCPU(b)
	go createPods(b, ctx, ns, run)
	deadline := time.After(10 * time.Minute)
	writes := 0
	for t.reported < *podCount {
		select {
		case e := <-pods.ResultChan():
			t.onPod(e)
		case e := <-queues.ResultChan():
			q, ok := e.Object.(*schedulingv1beta1.Queue)
			if ok && e.Type == watch.Modified && strings.HasPrefix(q.Name, "fresh-") {
				writes++
			}
			if ok && by == byStatus {
				t.observe(q.Name, q.Status.Allocated.Cpu().MilliValue(), time.Now())
			}
		case summaries := <-views:
			now := time.Now()
			for _, s := range summaries {
				t.observe(s.Name, s.Allocated.Cpu().MilliValue(), now)
			}
		case <-deadline:
			b.Fatalf("only %d of %d pods seen after 10m", t.reported, *podCount)
		}
	}
	b.StopTimer()
	return freshnessRun{latencies: t.latencies, writes: writes, elapsed: time.Since(start), cpu: processCPU(b) - cpuStart}
}

// readViews lists the live view's queue summaries back to back until ctx ends, and hands on each
// list as it arrives.
func readViews(b *testing.B, ctx context.Context) <-chan []visibilityv1beta1.QueueSummary {
	out := make(chan []visibilityv1beta1.QueueSummary)
	go func() {
		for ctx.Err() == nil {
			list, err := cluster.Queues.VisibilityV1beta1().QueueSummaries().List(ctx, metav1.ListOptions{})
			if err != nil {
				if ctx.Err() == nil {
					b.Errorf("reading the live view: %v", err)
				}
				return
			}
			select {
			case out <- list.Items:
			case <-ctx.Done():
			}
		}
	}()
	return out
}

// watchViews watches the live view's queue summaries from resourceVersion on until ctx ends, and
// hands on each summary it is sent.
func watchViews(b *testing.B, ctx context.Context, resourceVersion string) <-chan []visibilityv1beta1.QueueSummary {
	w := retryWatch(b, ctx, resourceVersion, cluster.Queues.VisibilityV1beta1().QueueSummaries().Watch)
	out := make(chan []visibilityv1beta1.QueueSummary)
	go func() {
		defer w.Stop()
		for e := range w.ResultChan() {
			s, ok := e.Object.(*visibilityv1beta1.QueueSummary)
			if !ok {
				b.Errorf("watching the live view: a %s event of %T: %v", e.Type, e.Object, e.Object)
				return
			}
			select {
			case out <- []visibilityv1beta1.QueueSummary{*s}:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// processCPU is the CPU time the process has used, user and system.
func processCPU(b *testing.B) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// retryWatch watches from resourceVersion on, reconnecting when the server ends a watch.
func retryWatch(b *testing.B, ctx context.Context, resourceVersion string, watchFunc cache.WatchFuncWithContext) *watchtools.RetryWatcher {
	w, err := watchtools.NewRetryWatcherWithContext(ctx, resourceVersion, &cache.ListWatch{WatchFuncWithContext: watchFunc})
	if err != nil {
		b.Fatal(err)
	}
	return w
}

// freshnessTracker pairs bind times with status updates, per queue.
type freshnessTracker struct {
	bound     map[string]bool
	binds     map[string][]time.Time // per queue, in bind order
	shown     map[string]int         // per queue, pods of this run the status counts
	offset    map[string]int         // per queue, pods the status counted before this run
	counted   map[string]int         // per queue, the most pods of this run a status has counted
	latencies []time.Duration
	reported  int
}

func newFreshnessTracker() *freshnessTracker {
	return &freshnessTracker{bound: map[string]bool{}, binds: map[string][]time.Time{}, shown: map[string]int{}, offset: map[string]int{}, counted: map[string]int{}}
}

func (t *freshnessTracker) onPod(e watch.Event) {
	pod, ok := e.Object.(*v1.Pod)
	if !ok || pod.Spec.NodeName == "" || t.bound[pod.Name] {
		return
	}
	t.bound[pod.Name] = true
	q := pod.Labels[schedulingv1beta1.QueueLabel]
	t.binds[q] = append(t.binds[q], time.Now())
	t.pair(q, t.counted[q], time.Now())
}

// observe pairs the binds of queue with a reading, at now, that shows allocatedMilli allocated.
func (t *freshnessTracker) observe(queue string, allocatedMilli int64, now time.Time) {
	count := int(allocatedMilli/podMilliCPU) - t.offset[queue]
	t.counted[queue] = max(t.counted[queue], count)
	t.pair(queue, t.counted[queue], now)
}

// pair records the latency of every bind of queue q that a status counting count pods covers. A
// status can arrive before the bind it counts (two watches, delivered independently): that pod's
// latency is recorded as 0.
func (t *freshnessTracker) pair(q string, count int, now time.Time) {
	for i := t.shown[q]; i < count && i < len(t.binds[q]); i++ {
		t.latencies = append(t.latencies, max(0, now.Sub(t.binds[q][i])))
		t.reported++
		t.shown[q] = i + 1
	}
}

// createPods creates the pods from 32 clients at once, spread round-robin across the queues.
func createPods(b *testing.B, ctx context.Context, ns, run string) {
	const clients = 32
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for i := c; i < *podCount; i += clients {
				pod := util.MakePod(ns, fmt.Sprintf("%s-%d", run, i)).
					Label(schedulingv1beta1.QueueLabel, queueName(i%*queueCount)).
					Req(map[v1.ResourceName]string{v1.ResourceCPU: fmt.Sprintf("%dm", podMilliCPU)}).Obj()
				if _, err := cluster.Kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, int(float64(len(s))*p))]
}
