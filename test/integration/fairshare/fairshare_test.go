// Package fairshare tests how queue-scheduler shares a cluster of known size between queues, on its
// own in-process control plane: 6 nodes of 10 CPUs, 60 CPUs in all. Each test starts from an empty
// cluster and leaves one.
package fairshare

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/utils/ptr"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/manifests"
	"github.com/queue-scheduler/queue-scheduler/pkg/localcluster"
	"github.com/queue-scheduler/queue-scheduler/test/clustertest"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

var cluster *localcluster.Cluster

const (
	nodes   = 6
	nodeCPU = 10
	ns      = "fairshare"
	settle  = 2 * time.Minute
)

// profile is the shipped profile with the Gang plugin's backoff longer than any wait of this
// package: a rejected gang here runs again only on the events that can help it (room freed, a queue
// changed, the shares recomputed), never because its backoff lapsed. The usage history is the
// shipped one (shares by weight alone) with an hour's half-life and checkpoints every usageCheckpoint.
func profile() []byte {
	return append(append([]byte(nil), manifests.SchedulerConfig...), fmt.Sprintf(`  pluginConfig:
  - name: Gang
    args:
      podGroupBackoffSeconds: %d
  - name: QueueState
    args:
      fairSharing:
        usageHalfLife: 1h
        checkpointInterval: %s
`, int(2*settle/time.Second), usageCheckpoint)...)
}

// usageCheckpoint is how often the controller writes each queue's usage into its status here.
const usageCheckpoint = 2 * time.Second

func TestMain(m *testing.M) {
	os.Exit(clustertest.RunWithCluster(m, localcluster.Options{SchedulerProfile: profile()}, func(ctx context.Context, c *localcluster.Cluster) error {
		cluster = c
		return clustertest.NodesAndNamespace(ctx, c, nodes, fmt.Sprint(nodeCPU), ns)
	}))
}

// withQueues creates the queues and, after the test, deletes every pod and then the queues.
func withQueues(t *testing.T, queues ...*schedulingv1beta1.Queue) {
	t.Helper()
	for _, q := range queues {
		if _, err := cluster.Queues.SchedulingV1beta1().Queues().Create(context.Background(), q, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create queue %s: %v", q.Name, err)
		}
	}
	// A queue of the same name deleted by an earlier test may still be in the scheduler's cache, where
	// the webhook would find it Closed: the controller's first status write shows the new one is in.
	for _, q := range queues {
		err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
			got, err := cluster.Queues.SchedulingV1beta1().Queues().Get(ctx, q.Name, metav1.GetOptions{})
			return err == nil && got.Status.State != "", nil
		})
		if err != nil {
			t.Fatalf("queue %s never got a status", q.Name)
		}
	}
	t.Cleanup(func() {
		deleteAllPods(t)
		for i := len(queues) - 1; i >= 0; i-- {
			closeAndDelete(t, queues[i].Name)
		}
	})
}

func deleteAllPods(t *testing.T) {
	if err := cluster.Queues.SchedulingV1beta1().PodGroups(ns).DeleteCollection(context.Background(), metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Errorf("delete podgroups: %v", err)
	}
	pods := cluster.Kube.CoreV1().Pods(ns)
	if err := pods.DeleteCollection(context.Background(), metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}, metav1.ListOptions{}); err != nil {
		t.Errorf("delete pods: %v", err)
	}
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		list, err := pods.List(ctx, metav1.ListOptions{})
		return err == nil && len(list.Items) == 0, nil
	})
	if err != nil {
		t.Errorf("pods still exist after %s", settle)
	}
}

func closeAndDelete(t *testing.T, name string) { clustertest.CloseAndDelete(t, cluster, name, settle) }

// submit creates count pods of cpu CPUs each in queue and returns the name of the last.
func submit(t *testing.T, queue string, count int, cpu string) string {
	t.Helper()
	for i := range count {
		pod := util.MakePod(ns, fmt.Sprintf("%s-%d", queue, i)).Label(schedulingv1beta1.QueueLabel, queue).
			Req(map[v1.ResourceName]string{v1.ResourceCPU: cpu}).Obj()
		if _, err := cluster.Kube.CoreV1().Pods(ns).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create pod: %v", err)
		}
	}
	return fmt.Sprintf("%s-%d", queue, count-1)
}

// whileCordoned submits demand while no node takes pods, so that every queue's demand is known before
// capacity appears: without reclaim, a queue that comes first keeps what it took while alone.
func whileCordoned(t *testing.T, submitAll func() []string) {
	t.Helper()
	setUnschedulable(t, true)
	last := submitAll()
	// Once the scheduler has turned the last pods away, it has seen all the demand.
	err := util.WaitForPods(context.Background(), cluster.Kube, ns, last, settle, "refused while cordoned",
		func(p *v1.Pod) bool {
			c := util.PodScheduledCondition(p)
			return c != nil && c.Status == v1.ConditionFalse
		})
	if err != nil {
		t.Fatal(err)
	}
	setUnschedulable(t, false)
}

func setUnschedulable(t *testing.T, cordoned bool) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"unschedulable":%t}}`, cordoned)
	for i := range nodes {
		if _, err := cluster.Kube.CoreV1().Nodes().Patch(context.Background(), fmt.Sprintf("node-%d", i), types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// boundCPU sums the CPU requests of the bound pods of each queue.
func boundCPU(t *testing.T) map[string]int64 {
	t.Helper()
	list, err := cluster.Kube.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, p := range list.Items {
		if p.Spec.NodeName != "" {
			requests := resourcehelper.PodRequests(&p, resourcehelper.PodResourcesOptions{})
			out[p.Labels[schedulingv1beta1.QueueLabel]] += requests.Cpu().Value()
		}
	}
	return out
}

// waitAllocation polls until ok holds for the CPUs bound per queue.
func waitAllocation(t *testing.T, what string, ok func(map[string]int64) bool) {
	t.Helper()
	var last map[string]int64
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(context.Context) (bool, error) {
		last = boundCPU(t)
		return ok(last), nil
	})
	if err != nil {
		t.Fatalf("allocation never %s: last %v; waiting pods: %v", what, last, waitingReasons(t))
	}
}

// waitingReasons counts the unbound pods by the reason on their PodScheduled condition.
func waitingReasons(t *testing.T) map[string]int {
	list, err := cluster.Kube.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, p := range list.Items {
		if p.Spec.NodeName != "" {
			continue
		}
		reason := "no condition"
		if c := util.PodScheduledCondition(&p); c != nil {
			reason = c.Message
		}
		out[reason]++
	}
	return out
}

func total(a map[string]int64) int64 {
	s := int64(0)
	for _, v := range a {
		s += v
	}
	return s
}

func near(got, want int64) bool { return got >= want-1 && got <= want+1 }

// Weights 1:2:3, unlimited demand of 1-CPU pods, 60 CPUs: allocations settle at 10/20/30 (±1 pod).
// The demand is all there when the capacity appears; arrivals one after another need reclaim.
func TestWeightsSettleAtShares(t *testing.T) {
	withQueues(t, util.MakeQueue("w1").Weight(1).Obj(), util.MakeQueue("w2").Weight(2).Obj(), util.MakeQueue("w3").Weight(3).Obj())
	whileCordoned(t, func() []string {
		return []string{submit(t, "w1", 60, "1"), submit(t, "w2", 60, "1"), submit(t, "w3", 60, "1")}
	})
	waitAllocation(t, "10/20/30", func(a map[string]int64) bool {
		return total(a) >= 59 && near(a["w1"], 10) && near(a["w2"], 20) && near(a["w3"], 30)
	})
}

// A capability of 8 CPUs is never exceeded, even on an idle cluster; the waiting pods say why.
func TestCapabilityIsNeverExceeded(t *testing.T) {
	withQueues(t, util.MakeQueue("capped").Capability(map[v1.ResourceName]string{v1.ResourceCPU: "8"}).Obj())
	submit(t, "capped", 20, "1")
	waitAllocation(t, "8 CPUs", func(a map[string]int64) bool { return a["capped"] == 8 })
	err := util.WaitForPods(context.Background(), cluster.Kube, ns, []string{"capped-19", "capped-0"}, settle, "bound or refused by capability",
		func(p *v1.Pod) bool {
			return util.IsBound(p) || util.HasUnschedulableMessage(`queue "capped" would exceed its capability of cpu`)(p)
		})
	if err != nil {
		t.Fatal(err)
	}
	if a := boundCPU(t); a["capped"] > 8 {
		t.Errorf("capped holds %d CPUs, above its capability of 8", a["capped"])
	}
}

// A guarantee of 20 CPUs is met for a weight-1 queue beside a weight-10 queue.
func TestGuaranteeIsMet(t *testing.T) {
	withQueues(t,
		util.MakeQueue("guaranteed").Weight(1).Guarantee(map[v1.ResourceName]string{v1.ResourceCPU: "20"}).Obj(),
		util.MakeQueue("heavy").Weight(10).Obj())
	whileCordoned(t, func() []string {
		return []string{submit(t, "heavy", 60, "1"), submit(t, "guaranteed", 60, "1")}
	})
	waitAllocation(t, "full with at least 20 for guaranteed", func(a map[string]int64) bool {
		return total(a) >= 59 && a["guaranteed"] >= 20
	})
}

// Two queues each holding one job bigger than its share: the cluster is not left idle.
func TestJobsBiggerThanTheirShareDoNotIdleTheCluster(t *testing.T) {
	withQueues(t, util.MakeQueue("big-a").Obj(), util.MakeQueue("big-b").Obj())
	// Each node fits one 8-CPU pod; each queue deserves 30 CPUs and asks for 40.
	submit(t, "big-a", 5, "8")
	submit(t, "big-b", 5, "8")
	waitAllocation(t, "every node busy", func(a map[string]int64) bool {
		return total(a) == nodes*8 && a["big-a"] > 0 && a["big-b"] > 0
	})
}

// A two-level tree splits a parent's share among its children by their weights.
func TestParentShareSplitByChildWeights(t *testing.T) {
	withQueues(t,
		util.MakeQueue("org").Weight(1).Obj(),
		util.MakeQueue("org-small").Parent("org").Weight(1).Obj(),
		util.MakeQueue("org-large").Parent("org").Weight(3).Obj(),
		util.MakeQueue("other").Weight(1).Obj())
	whileCordoned(t, func() []string {
		return []string{submit(t, "org-small", 40, "1"), submit(t, "org-large", 40, "1"), submit(t, "other", 40, "1")}
	})
	waitAllocation(t, "30 each side, 1:3 below org", func(a map[string]int64) bool {
		return total(a) >= 59 && near(a["other"], 30) && near(a["org-small"]+a["org-large"], 30) &&
			a["org-small"] >= 7 && a["org-small"] <= 8 && a["org-large"] >= 22 && a["org-large"] <= 23
	})
}
