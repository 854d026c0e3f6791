package perf

import (
	"context"
	"flag"
	"fmt"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
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
// runs from the first release to the last binding. Runs go in the order vanilla, ours, limit, limit,
// ours, vanilla, so that drift over the run weighs on all alike; it reports the mean rates, ours over
// vanilla, and each over the limit.
func BenchmarkThroughput(b *testing.B) {
	compare(b, "g", true)
}

// BenchmarkEndToEnd is BenchmarkThroughput with the pods created ungated: the rate runs from the
// first creation to the last binding, so it includes the admission of each pod (for queue-scheduler,
// its validating webhook) and the creation itself.
func BenchmarkEndToEnd(b *testing.B) {
	compare(b, "e", false)
}

// compare schedules the same pods with each scheduler, in runs named <prefix><i>-<j>.
func compare(b *testing.B, prefix string, gated bool) {
	ctx := context.Background()
	ns := setUpThroughput(b, ctx)
	order := []string{vanillaScheduler, schedulingv1beta1.SchedulerName, limitScheduler, limitScheduler, schedulingv1beta1.SchedulerName, vanillaScheduler}
	for i := 0; i < b.N; i++ {
		rates := map[string]float64{}
		for j, name := range order {
			rates[name] += schedule(b, ctx, ns, fmt.Sprintf("%s%d-%d", prefix, i, j), name, gated) / 2
		}
		vanilla, ours, limit := rates[vanillaScheduler], rates[schedulingv1beta1.SchedulerName], rates[limitScheduler]
		b.ReportMetric(vanilla, "vanilla-pods/s")
		b.ReportMetric(ours, "queue-pods/s")
		b.ReportMetric(limit, "limit-pods/s")
		b.ReportMetric(ours/vanilla, "ratio")
		b.ReportMetric(ours/limit, "queue/limit")
		b.ReportMetric(vanilla/limit, "vanilla/limit")
	}
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

// eachPod runs do for every pod index from 32 clients.
func eachPod(b *testing.B, do func(i int) error) {
	const clients = 32
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for i := c; i < *podCount; i += clients {
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

// schedule creates -pods pods for schedulerName from 32 clients and returns pods bound per second:
// gated, from the first release to the last binding; otherwise from the first creation. It deletes
// them afterwards.
func schedule(b *testing.B, ctx context.Context, ns, run, schedulerName string, gated bool) float64 {
	start := time.Now()
	eachPod(b, func(i int) error {
		pod := util.MakePod(ns, fmt.Sprintf("%s-%d", run, i)).SchedulerName(schedulerName).
			Label("run", run).Label(schedulingv1beta1.QueueLabel, fmt.Sprintf("tp-%03d", i%*queueCount)).
			Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()
		if gated {
			pod.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: benchGate}}
		}
		_, err := cluster.Kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		return err
	})
	created := time.Since(start)
	if gated {
		start = time.Now()
		release := []byte(`[{"op":"remove","path":"/spec/schedulingGates"}]`)
		eachPod(b, func(i int) error {
			_, err := cluster.Kube.CoreV1().Pods(ns).Patch(ctx, fmt.Sprintf("%s-%d", run, i), types.JSONPatchType, release, metav1.PatchOptions{})
			return err
		})
	}
	selector := metav1.ListOptions{LabelSelector: "run=" + run}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 20*time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := cluster.Kube.CoreV1().Pods(ns).List(ctx, selector)
		if err != nil {
			return false, nil
		}
		bound := 0
		for _, p := range list.Items {
			if p.Spec.NodeName != "" {
				bound++
			}
		}
		return bound == *podCount, nil
	})
	if err != nil {
		b.Fatalf("%s: not all %d pods bound", schedulerName, *podCount)
	}
	elapsed := time.Since(start)
	rate := float64(*podCount) / elapsed.Seconds()
	b.Logf("%s %s: created in %.1f s, all bound %.1f s after the start: %.1f pods/s", run, schedulerName, created.Seconds(), elapsed.Seconds(), rate)
	if err := cluster.Kube.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}, selector); err != nil {
		b.Fatal(err)
	}
	// The next run starts once the deletions are through, so that it does not pay for them.
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := cluster.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		return err == nil && len(list.Items) == 0, nil
	})
	if err != nil {
		b.Fatalf("%s: pods not deleted", schedulerName)
	}
	return rate
}
