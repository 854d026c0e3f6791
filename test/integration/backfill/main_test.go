// Package backfill tests reservations and backfill on a scheduler with the Backfill plugin, on its
// own in-process control plane: 4 nodes of 8 CPUs. The test stands in for the kubelets: it marks
// bound pods started, and ends them by deleting them. Each test starts from an empty cluster and
// leaves one.
package backfill

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/manifests"
	"github.com/queue-scheduler/queue-scheduler/pkg/localcluster"
	"github.com/queue-scheduler/queue-scheduler/test/clustertest"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

var cluster *localcluster.Cluster

const (
	nodes = 4
	ns    = "backfill"
	// settle bounds every wait of the package.
	settle = 2 * time.Minute
	// resolution is the Backfill plugin's here.
	resolution = time.Second
	// lapseAfter is the Backfill plugin's here: well above the scheduler's and the Gang plugin's
	// longest retries (10s), so that a gang that can start always does before its reservation lapses.
	lapseAfter = 20 * time.Second
)

// profile is the shipped profile with the Backfill plugin enabled, planning every 200ms.
func profile() []byte {
	p := bytes.Replace(manifests.SchedulerConfig, []byte("      - name: Gang\n"), []byte("      - name: Gang\n      - name: Backfill\n"), 1)
	return fmt.Appendf(p, `  pluginConfig:
  - name: Backfill
    args:
      resolution: %s
      replanInterval: 200ms
      lapseAfter: %s
`, resolution, lapseAfter)
}

func TestMain(m *testing.M) {
	os.Exit(clustertest.RunWithCluster(m, localcluster.Options{SchedulerProfile: profile()}, func(ctx context.Context, c *localcluster.Cluster) error {
		cluster = c
		return clustertest.NodesAndNamespace(ctx, c, nodes, "8", ns)
	}))
}

// withQueues creates the queues of a test: fill, not reclaimable, whose pods fill the cluster;
// gang, weighted to deserve what its gang asks; late, for the pods submitted once the gang waits.
// It waits for their first status, and after the test deletes every pod and PodGroup and then the
// queues.
func withQueues(t *testing.T, fill, gang, late string) {
	t.Helper()
	ctx := context.Background()
	api := cluster.Queues.SchedulingV1beta1().Queues()
	for _, q := range []*util.QueueWrapper{util.MakeQueue(fill).Reclaimable(false), util.MakeQueue(gang).Weight(4), util.MakeQueue(late).Weight(2)} {
		if _, err := api.Create(ctx, q.Obj(), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create queue %s: %v", q.Name, err)
		}
	}
	for _, name := range []string{fill, gang, late} {
		err := wait.PollUntilContextTimeout(ctx, util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
			q, err := api.Get(ctx, name, metav1.GetOptions{})
			return err == nil && q.Status.State != "", nil
		})
		if err != nil {
			t.Fatalf("queue %s never got a status", name)
		}
	}
	t.Cleanup(func() {
		now := metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}
		if err := cluster.Kube.CoreV1().Pods(ns).DeleteCollection(ctx, now, metav1.ListOptions{}); err != nil {
			t.Errorf("delete pods: %v", err)
		}
		if err := cluster.Queues.SchedulingV1beta1().PodGroups(ns).DeleteCollection(ctx, now, metav1.ListOptions{}); err != nil {
			t.Errorf("delete podgroups: %v", err)
		}
		for _, name := range []string{fill, gang, late} {
			clustertest.CloseAndDelete(t, cluster, name, settle)
		}
	})
}

// job is a pod to submit: cpu CPUs, a runtime bound of deadline seconds (0: none), of a gang when
// group is set.
type job struct {
	name, queue, cpu string
	deadline         int64
	group            string
	// hostPort, when set, is a port the pod takes on its node.
	hostPort int32
}

func submit(t *testing.T, jobs ...job) {
	t.Helper()
	for _, j := range jobs {
		w := util.MakePod(ns, j.name).Label(schedulingv1beta1.QueueLabel, j.queue).Req(map[v1.ResourceName]string{v1.ResourceCPU: j.cpu})
		if j.group != "" {
			w = w.Label(schedulingv1beta1.PodGroupLabel, j.group)
		}
		if j.hostPort != 0 {
			w = w.ContainerPort([]v1.ContainerPort{{ContainerPort: j.hostPort, HostPort: j.hostPort, Protocol: v1.ProtocolTCP}})
		}
		pod := w.Obj()
		if j.deadline > 0 {
			pod.Spec.ActiveDeadlineSeconds = ptr.To(j.deadline)
		}
		if _, err := cluster.Kube.CoreV1().Pods(ns).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create pod %s: %v", j.name, err)
		}
	}
}

// many are count jobs like j, named <j.name>-<i>.
func many(j job, count int) []job {
	out := make([]job, count)
	for i := range out {
		out[i] = j
		out[i].name = fmt.Sprintf("%s-%d", j.name, i)
	}
	return out
}

func names(jobs []job) []string {
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = j.name
	}
	return out
}

// gang creates a PodGroup of queue needing all of its members, and the members.
func gang(t *testing.T, name, queue string, members []job) {
	t.Helper()
	pg := util.MakePodGroup(ns, name).MinMember(int32(len(members))).Queue(queue).Obj()
	if _, err := cluster.Queues.SchedulingV1beta1().PodGroups(ns).Create(context.Background(), pg, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create podgroup %s: %v", name, err)
	}
	for i := range members {
		members[i].group = name
	}
	submit(t, members...)
}

// pods lists the namespace's pods not being deleted, by name.
func pods(t *testing.T) map[string]*v1.Pod {
	t.Helper()
	list, err := cluster.Kube.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*v1.Pod{}
	for i := range list.Items {
		if p := &list.Items[i]; p.DeletionTimestamp == nil {
			out[p.Name] = p
		}
	}
	return out
}

// waitBound waits until every named pod is bound, and returns the pods.
func waitBound(t *testing.T, what string, want ...string) map[string]*v1.Pod {
	t.Helper()
	var last map[string]*v1.Pod
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(context.Context) (bool, error) {
		last = pods(t)
		for _, name := range want {
			if p, ok := last[name]; !ok || p.Spec.NodeName == "" {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("%s: pods never all bound", what)
	}
	return last
}

// start marks the named bound pods Running since at, as their kubelet would: their runtime bounds
// count from then.
func start(t *testing.T, at time.Time, names ...string) {
	t.Helper()
	for name, pod := range pods(t) {
		if !slices.Contains(names, name) {
			continue
		}
		pod.Status.Phase = v1.PodRunning
		pod.Status.StartTime = ptr.To(metav1.NewTime(at))
		if _, err := cluster.Kube.CoreV1().Pods(ns).UpdateStatus(context.Background(), pod, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("start pod %s: %v", name, err)
		}
	}
}

// end deletes the named pods, as if they ended.
func end(t *testing.T, names ...string) {
	t.Helper()
	for _, name := range names {
		if err := cluster.Kube.CoreV1().Pods(ns).Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
			t.Fatalf("end pod %s: %v", name, err)
		}
	}
}

// onNode are the named pods bound on node.
func onNode(all map[string]*v1.Pod, node string, names ...string) []string {
	var out []string
	for _, name := range names {
		if p, ok := all[name]; ok && p.Spec.NodeName == node {
			out = append(out, name)
		}
	}
	return out
}

// reservation waits until the live view shows the gang's reservation and ok accepts it.
func reservation(t *testing.T, group string, ok func(*visibilityv1beta1.Reservation) bool) *visibilityv1beta1.Reservation {
	t.Helper()
	var last *visibilityv1beta1.Reservation
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		list, err := cluster.Queues.VisibilityV1beta1().PendingWorkloads(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		last = nil
		for _, w := range list.Items {
			if w.Workload.Kind == visibilityv1beta1.WorkloadPodGroup && w.Workload.Name == group {
				last = w.Reservation
			}
		}
		return last != nil && ok(last), nil
	})
	if err != nil {
		t.Fatalf("gang %s: the live view never showed the reservation wanted; last %+v", group, last)
	}
	return last
}

// reservedCondition waits until the PodGroup's Reserved condition has status and reason, and a
// message that holds text.
func reservedCondition(t *testing.T, group string, status metav1.ConditionStatus, reason, text string) metav1.Condition {
	t.Helper()
	var last *metav1.Condition
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		pg, err := cluster.Queues.SchedulingV1beta1().PodGroups(ns).Get(ctx, group, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = meta.FindStatusCondition(pg.Status.Conditions, schedulingv1beta1.PodGroupReserved)
		return last != nil && last.Status == status && last.Reason == reason && strings.Contains(last.Message, text), nil
	})
	if err != nil {
		t.Fatalf("podgroup %s: Reserved never %s/%s saying %q; last %+v", group, status, reason, text, last)
	}
	return *last
}
