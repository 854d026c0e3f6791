// Package history tests the usage history on a scheduler whose usage moves the shares
// (fairSharing.usageFactor 1), on its own in-process control plane: 6 nodes of 10 CPUs. Each test
// starts from an empty cluster and leaves one.
package history

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/manifests"
	"github.com/queue-scheduler/queue-scheduler/pkg/history"
	"github.com/queue-scheduler/queue-scheduler/pkg/localcluster"
	"github.com/queue-scheduler/queue-scheduler/test/clustertest"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

var cluster *localcluster.Cluster

const (
	nodes = 6
	ns    = "history"
	// settle bounds every wait of the package.
	settle = 2 * time.Minute
	// usageCheckpoint is how often the controller writes each queue's usage into its status here.
	usageCheckpoint = 2 * time.Second
)

// settings are the usage history of this package's scheduler: an hour's half-life, usage moving the
// shares as much as the weights.
var settings = history.Settings{HalfLife: time.Hour, EntryCharge: time.Minute, Factor: 1}

func profile() []byte {
	return fmt.Appendf(append([]byte(nil), manifests.SchedulerConfig...), `  pluginConfig:
  - name: QueueState
    args:
      fairSharing:
        usageHalfLife: %s
        usageFactor: %g
        checkpointInterval: %s
`, settings.HalfLife, settings.Factor, usageCheckpoint)
}

func TestMain(m *testing.M) {
	os.Exit(clustertest.RunWithCluster(m, localcluster.Options{SchedulerProfile: profile()}, func(ctx context.Context, c *localcluster.Cluster) error {
		cluster = c
		return clustertest.NodesAndNamespace(ctx, c, nodes, "10", ns)
	}))
}

// withQueues creates the queues, waits for their first status, and after the test deletes every pod
// and then the queues.
func withQueues(t *testing.T, names ...string) {
	t.Helper()
	ctx := context.Background()
	api := cluster.Queues.SchedulingV1beta1().Queues()
	for _, name := range names {
		if _, err := api.Create(ctx, util.MakeQueue(name).Obj(), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create queue %s: %v", name, err)
		}
		err := wait.PollUntilContextTimeout(ctx, util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
			q, err := api.Get(ctx, name, metav1.GetOptions{})
			return err == nil && q.Status.State != "", nil
		})
		if err != nil {
			t.Fatalf("queue %s never got a status", name)
		}
	}
	t.Cleanup(func() {
		pods := cluster.Kube.CoreV1().Pods(ns)
		if err := pods.DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}, metav1.ListOptions{}); err != nil {
			t.Errorf("delete pods: %v", err)
		}
		for _, name := range names {
			clustertest.CloseAndDelete(t, cluster, name, settle)
		}
	})
}

// submit creates count pods of cpu CPUs each, named <queue>-<first+i>, in queue.
func submit(t *testing.T, queue string, first, count int, cpu string) {
	t.Helper()
	for i := range count {
		pod := util.MakePod(ns, fmt.Sprintf("%s-%d", queue, first+i)).Label(schedulingv1beta1.QueueLabel, queue).
			Req(map[v1.ResourceName]string{v1.ResourceCPU: cpu}).Obj()
		if _, err := cluster.Kube.CoreV1().Pods(ns).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create pod: %v", err)
		}
	}
}

// livePods lists the namespace's pods not being deleted, by name, with whether each is bound.
func livePods(t *testing.T) map[string]bool {
	t.Helper()
	list, err := cluster.Kube.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			out[p.Name] = p.Spec.NodeName != ""
		}
	}
	return out
}

// waitBound waits until every named pod is bound.
func waitBound(t *testing.T, what string, names ...string) {
	t.Helper()
	var last map[string]bool
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(context.Context) (bool, error) {
		last = livePods(t)
		for _, name := range names {
			if !last[name] {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("%s: pods never all bound; live pods (name: bound) %v", what, last)
	}
}

// names are <queue>-<i> for i below count.
func names(queue string, count int) []string {
	out := make([]string, count)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", queue, i)
	}
	return out
}
