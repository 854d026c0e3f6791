package perf

import (
	"context"
	"flag"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	upstreamscheduling "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/localcluster"
	"github.com/queue-scheduler/queue-scheduler/test/gangcrds"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

var (
	gangCount   = flag.Int("gangs", 500, "gangs of the gang case")
	gangSize    = flag.Int("gang-size", 4, "pods in each gang")
	gangNodes   = flag.Int("gang-nodes", 1000, "fake nodes of the gang case")
	warmUpGangs = flag.Int("warmup-gangs", 50, "gangs each scheduler schedules, unmeasured, before the gang case")
	bindTimeout = flag.Duration("bind-timeout", 10*time.Minute, "how long a run may wait for its pods to be bound")
)

// gangFeatureGates are the feature gates of the gang case's API server. The in-process API server sets
// them for the whole process while it runs, so the upstream scheduler started on it gets the
// GangScheduling plugin in its default profile.
var gangFeatureGates = flag.String("gang-feature-gates", "GenericWorkload=true", "feature gates of the gang case's control plane and schedulers")

// gangAPIServerFlags serve the upstream Workload and PodGroup API (scheduling.k8s.io/v1beta1) with the
// gang case's feature gates.
// PodGroupProtection's finalizer is removed by a controller-manager, which this control plane does
// not run: with it, a side's deleted PodGroups would stay, and the next side's of the same names
// could not be created.
func gangAPIServerFlags() []string {
	return []string{"--feature-gates=" + *gangFeatureGates, "--runtime-config=scheduling.k8s.io/v1beta1=true",
		"--disable-admission-plugins=PodGroupProtection"}
}

const (
	gangNamespace = "gangs"
	// gangWorkload is the upstream Workload every upstream PodGroup of the case refers to.
	gangWorkload = "bench"
	gangTemplate = "workers"
)

// gangSide is one way of running gangs: the PodGroup object it needs and how a pod joins it.
type gangSide struct {
	name          string
	schedulerName string
	createGroup   func(ctx context.Context, c *localcluster.Cluster, group string, gang int) error
	join          func(pod *v1.Pod, group string)
	deleteGroups  func(ctx context.Context, c *localcluster.Cluster) error
	// admitted: queue-scheduler admits the groups into their queues (its own PodGroups, and those of
	// other APIs, which its controller mirrors first); the pods are released once every group is
	// admitted, as the upstream side's are once its groups exist, so that each side's timed window
	// holds its scheduling alone.
	admitted bool
}

// upstreamGangs is kube-scheduler's GangScheduling plugin: a scheduling.k8s.io/v1beta1 PodGroup
// with a gang policy, from the Workload's template, named by each pod's spec.schedulingGroup.
var upstreamGangs = gangSide{
	name:          "upstream GangScheduling",
	schedulerName: vanillaScheduler,
	createGroup: func(ctx context.Context, c *localcluster.Cluster, group string, _ int) error {
		pg := &upstreamscheduling.PodGroup{
			ObjectMeta: metav1.ObjectMeta{Name: group, Namespace: gangNamespace},
			Spec: upstreamscheduling.PodGroupSpec{
				WorkloadRef:      &upstreamscheduling.WorkloadReference{WorkloadName: gangWorkload, TemplateName: gangTemplate},
				SchedulingPolicy: gangPolicy(),
			},
		}
		_, err := c.Kube.SchedulingV1beta1().PodGroups(gangNamespace).Create(ctx, pg, metav1.CreateOptions{})
		return err
	},
	join: func(pod *v1.Pod, group string) {
		pod.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: ptr.To(group)}
	},
	deleteGroups: func(ctx context.Context, c *localcluster.Cluster) error {
		return c.Kube.SchedulingV1beta1().PodGroups(gangNamespace).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	},
}

// ourGangs is queue-scheduler's Gang plugin: a PodGroup of ours with minMember, in one of -queues
// queues, named by each pod's pod-group label.
var ourGangs = gangSide{
	name:          "queue-scheduler Gang",
	schedulerName: schedulingv1beta1.SchedulerName,
	createGroup: func(ctx context.Context, c *localcluster.Cluster, group string, gang int) error {
		pg := util.MakePodGroup(gangNamespace, group).MinMember(int32(*gangSize)).Queue(gangQueue(gang)).Obj()
		_, err := c.Queues.SchedulingV1beta1().PodGroups(gangNamespace).Create(ctx, pg, metav1.CreateOptions{})
		return err
	},
	join: func(pod *v1.Pod, group string) {
		pod.Labels[schedulingv1beta1.PodGroupLabel] = group
	},
	admitted: true,
	deleteGroups: func(ctx context.Context, c *localcluster.Cluster) error {
		return c.Queues.SchedulingV1beta1().PodGroups(gangNamespace).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	},
}

func gangPolicy() upstreamscheduling.PodGroupSchedulingPolicy {
	return upstreamscheduling.PodGroupSchedulingPolicy{Gang: &upstreamscheduling.GangSchedulingPolicy{MinCount: int32(*gangSize)}}
}

func gangQueue(gang int) string { return fmt.Sprintf("gang-%03d", gang%*queueCount) }

// BenchmarkGangs schedules -gangs gangs of -gang-size 1-CPU pods on -gang-nodes nodes, with the
// upstream GangScheduling plugin and with queue-scheduler's Gang plugin, on a control plane of its
// own with the GenericWorkload gate on. The groups and the pods are created first, the pods held by a
// scheduling gate; 32 clients then release them gang by gang. It reports pods bound per second (first
// release to last binding) and, per gang, the time from its last pod's release to its last pod's
// binding, p50 and p99. Each side first runs -warmup-gangs gangs unmeasured; the order of the sides
// turns with each repeat, over as many repeats as it takes for each side to run in each place alike
// (rotations).
func BenchmarkGangs(b *testing.B) {
	ctx := context.Background()
	sides, err := gangSides()
	if err != nil {
		b.Fatal(err)
	}
	c, err := localcluster.Start(ctx, localcluster.Options{APIServerFlags: gangAPIServerFlags(), VanillaSchedulerName: vanillaScheduler})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Stop()
	setUpGangs(b, ctx, c)
	for i := 0; i < b.N; i++ {
		for _, side := range sides {
			runGangs(b, ctx, c, side, fmt.Sprintf("w%d", i), *warmUpGangs)
		}
		measured := map[string]*gangMeasures{}
		for r := range rotations(len(sides)) {
			for j := range sides {
				side := sides[(r+j)%len(sides)]
				m := measured[side.name]
				if m == nil {
					m = &gangMeasures{}
					measured[side.name] = m
				}
				m.add(runGangs(b, ctx, c, side, fmt.Sprintf("r%d-%d", i, r), *gangCount))
			}
		}
		reportGangs(b, measured[ourGangs.name], measured[upstreamGangs.name])
		reportGangSources(measured)
	}
}

// setUpGangs makes the nodes, the queues, the namespace, the upstream Workload and the CRDs of
// scheduler-plugins' and Volcano's PodGroups.
func setUpGangs(b *testing.B, ctx context.Context, c *localcluster.Cluster) {
	if err := localcluster.InstallCRDsFrom(ctx, c.Config, gangcrds.FS, "*.yaml"); err != nil {
		b.Fatal(err)
	}
	populate(b, ctx, c, "gang-node-", *gangNodes, gangQueue, *queueCount, gangNamespace)
	workload := &upstreamscheduling.Workload{
		ObjectMeta: metav1.ObjectMeta{Name: gangWorkload, Namespace: gangNamespace},
		Spec: upstreamscheduling.WorkloadSpec{PodGroupTemplates: []upstreamscheduling.PodGroupTemplate{
			{Name: gangTemplate, SchedulingPolicy: gangPolicy()},
		}},
	}
	if _, err := c.Kube.SchedulingV1beta1().Workloads(gangNamespace).Create(ctx, workload, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
}

// populate creates n 32-CPU nodes named prefix<i>, the queues queueName(0…queues-1) and the namespace.
func populate(b *testing.B, ctx context.Context, c *localcluster.Cluster, prefix string, n int, queueName func(int) string, queues int, namespace string) {
	eachIndex(b, n, func(i int) error {
		_, err := c.Kube.CoreV1().Nodes().Create(ctx, util.MakeNode(fmt.Sprintf("%s%d", prefix, i), "32", "128Gi"), metav1.CreateOptions{})
		return err
	})
	eachIndex(b, queues, func(i int) error {
		_, err := c.Queues.SchedulingV1beta1().Queues().Create(ctx, util.MakeQueue(queueName(i)).Obj(), metav1.CreateOptions{})
		return err
	})
	ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if _, err := c.Kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
}

// gangRun is what one run of gangs measured.
type gangRun struct {
	rate    float64
	perGang []time.Duration
	// statusWrites is the Queue status writes the run caused.
	statusWrites float64
}

// runGangs creates the groups and their gated pods, releases them gang by gang and waits until all
// are bound; then deletes them.
func runGangs(b *testing.B, ctx context.Context, c *localcluster.Cluster, side gangSide, run string, gangs int) gangRun {
	group := func(g int) string { return fmt.Sprintf("%s-%d", run, g) }
	podName := func(i int) string { return fmt.Sprintf("%s-%d-%d", run, i / *gangSize, i%*gangSize) }
	eachIndex(b, gangs, func(g int) error { return side.createGroup(ctx, c, group(g), g) })
	eachIndex(b, gangs**gangSize, func(i int) error {
		pod := util.MakePod(gangNamespace, podName(i)).SchedulerName(side.schedulerName).Label("run", run).
			Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()
		pod.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: benchGate}}
		side.join(pod, group(i / *gangSize))
		_, err := c.Kube.CoreV1().Pods(gangNamespace).Create(ctx, pod, metav1.CreateOptions{})
		return err
	})
	if side.admitted {
		if err := waitAdmitted(ctx, c, group, gangs); err != nil {
			b.Fatalf("%s: the groups were not admitted: %v", side.name, err)
		}
	}
	list, err := c.Kube.CoreV1().Pods(gangNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	pods := retryWatch(b, ctx, list.ResourceVersion, c.Kube.CoreV1().Pods(gangNamespace).Watch)
	defer pods.Stop()

	counters := snapshotCounters()
	stopProfile := profileRun(b, run+"-"+side.name, gangs == *gangCount)
	defer stopProfile()
	start := time.Now()
	releasedAt := make([]time.Time, gangs)
	releasing := make(chan struct{})
	go func() {
		defer close(releasing)
		release := []byte(`[{"op":"remove","path":"/spec/schedulingGates"}]`)
		eachIndex(b, gangs, func(g int) error {
			for k := range *gangSize {
				if _, err := c.Kube.CoreV1().Pods(gangNamespace).Patch(ctx, podName(g**gangSize+k), types.JSONPatchType, release, metav1.PatchOptions{}); err != nil {
					return err
				}
			}
			releasedAt[g] = time.Now()
			return nil
		})
	}()
	boundAt := waitGangsBound(b, pods.ResultChan(), run, gangs, func() string { return unboundReason(ctx, c.Kube, gangNamespace, run) })
	<-releasing
	stopProfile()
	pods.Stop() // before the deletions, which it would otherwise be sent
	result := gangResult(start, releasedAt, boundAt)
	result.statusWrites = snapshotCounters().queueStatusWrites(counters)
	logRun(b, "%s %s: %d gangs, %.1f pods/s, per gang max %s; %s", run, side.name, gangs, result.rate,
		percentile(result.perGang, 1).Round(time.Millisecond), snapshotCounters().since(counters))
	deleteAllPods(b, ctx, c.Kube, gangNamespace)
	if err := side.deleteGroups(ctx, c); err != nil {
		b.Fatal(err)
	}
	waitNoPodGroups(b, ctx, c)
	waitQueuesSettled(b, ctx, c.Queues, "gang-")
	return result
}

// waitNoPodGroups waits until queue-scheduler's PodGroups of the run, mirrors included (the
// controller deletes those after their sources), are gone: the next side's groups have the same
// names, and their deletion is not the next side's work.
func waitNoPodGroups(b *testing.B, ctx context.Context, c *localcluster.Cluster) {
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, *bindTimeout, true, func(ctx context.Context) (bool, error) {
		list, err := c.Queues.SchedulingV1beta1().PodGroups(gangNamespace).List(ctx, metav1.ListOptions{})
		return err == nil && len(list.Items) == 0, nil
	})
	if err != nil {
		b.Fatalf("queue-scheduler PodGroups of the run still there after %s", *bindTimeout)
	}
}

// waitGangsBound follows the pods of the run until all are bound and returns, per gang, when its last
// pod was seen bound.
func waitGangsBound(b *testing.B, events <-chan watch.Event, run string, gangs int, why func() string) []time.Time {
	boundAt := make([]time.Time, gangs)
	waitBound(b, events, run, gangs**gangSize, map[string]bool{}, why, func(pod *v1.Pod) {
		var g, k int
		if _, err := fmt.Sscanf(pod.Name[len(run)+1:], "%d-%d", &g, &k); err != nil {
			b.Fatalf("pod %s: %v", pod.Name, err)
		}
		boundAt[g] = time.Now()
	})
	return boundAt
}

// gangResult is the rate from start to the last binding and each gang's time from release to binding.
func gangResult(start time.Time, releasedAt, boundAt []time.Time) gangRun {
	last := start
	perGang := make([]time.Duration, len(boundAt))
	for g, at := range boundAt {
		if at.After(last) {
			last = at
		}
		perGang[g] = max(0, at.Sub(releasedAt[g]))
	}
	return gangRun{rate: float64(len(boundAt)**gangSize) / last.Sub(start).Seconds(), perGang: perGang}
}

// gangMeasures collects the repeats of one side.
type gangMeasures struct{ rate, p50, p99, writes []float64 }

func (m *gangMeasures) add(r gangRun) {
	m.rate = append(m.rate, r.rate)
	m.writes = append(m.writes, r.statusWrites/float64(len(r.perGang)**gangSize))
	m.p50 = append(m.p50, percentile(r.perGang, 0.50).Seconds()*1000)
	m.p99 = append(m.p99, percentile(r.perGang, 0.99).Seconds()*1000)
}

func (m *gangMeasures) format() string {
	return fmt.Sprintf("%s; per gang p50 %s, p99 %s; %s", spreadOf(m.rate).format(0, " pods/s"),
		spreadOf(m.p50).format(0, " ms"), spreadOf(m.p99).format(0, " ms"), spreadOf(m.writes).format(3, " Queue status writes a pod"))
}

// reportGangs records the row: both sides and ours over upstream in pods/s.
func reportGangs(b *testing.B, ours, upstream *gangMeasures) {
	var ratio []float64
	for r := range ours.rate {
		ratio = append(ratio, ours.rate[r]/upstream.rate[r])
	}
	rs := spreadOf(ratio)
	b.ReportMetric(spreadOf(ours.rate).median, "queue-pods/s")
	b.ReportMetric(spreadOf(upstream.rate).median, "upstream-pods/s")
	b.ReportMetric(rs.median, "ratio")
	record(row{Case: fmt.Sprintf("Gangs — %d gangs of %d on %d nodes, upstream GangScheduling (Workload/PodGroup)", *gangCount, *gangSize, *gangNodes),
		Ours: ours.format(), Upstream: upstream.format(), Ratio: rs.format(3, "") + " (pods/s)", Target: "≥ 1.0 (not slower)",
		Values: map[string]float64{
			"ours": spreadOf(ours.rate).median, "upstream": spreadOf(upstream.rate).median, "ratio": rs.median,
			"ours_p50_ms": spreadOf(ours.p50).median, "ours_p99_ms": spreadOf(ours.p99).median,
			"upstream_p50_ms": spreadOf(upstream.p50).median, "upstream_p99_ms": spreadOf(upstream.p99).median,
		}})
}
