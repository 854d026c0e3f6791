package install

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	spv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"
	spclient "sigs.k8s.io/scheduler-plugins/pkg/generated/clientset/versioned"

	busv1alpha1 "github.com/queue-scheduler/queue-scheduler/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/holdreport"
	"github.com/queue-scheduler/queue-scheduler/pkg/localcluster"
	"github.com/queue-scheduler/queue-scheduler/pkg/queueclient"
	"github.com/queue-scheduler/queue-scheduler/test/gangcrds"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// settle bounds each wait of the scenario.
const settle = time.Minute

// runScenario takes every path that needs one of the ServiceAccount's permissions, as the
// administrator and two tenants would: queues through the webhook, pods bound and counted, reclaim
// through the Eviction API, a Command from the scheduler's namespace, a held pod's condition, a gang
// and its status, a QueueUnit that releases its Job.
func runScenario(ctx context.Context, t *testing.T) {
	create(t, "node n1", func() error {
		_, err := cluster.Kube.CoreV1().Nodes().Create(ctx, util.MakeNode("n1", "4", "8Gi"), metav1.CreateOptions{})
		return err
	})
	for _, team := range []string{"a", "b"} {
		ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-" + team, Labels: map[string]string{"team": team}}}
		create(t, "namespace "+ns.Name, func() error {
			_, err := cluster.Kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
			return err
		})
		queue := util.MakeQueue(team).Namespaces(map[string]string{"team": team}).Obj()
		create(t, "queue "+team, func() error {
			_, err := cluster.Queues.SchedulingV1beta1().Queues().Create(ctx, queue, metav1.CreateOptions{})
			return err
		})
	}

	t.Run("the webhook refuses a pod in another tenant's queue", func(t *testing.T) {
		_, err := cluster.Kube.CoreV1().Pods("team-a").Create(ctx, cpuPod("team-a", "intruder", "b"), metav1.CreateOptions{})
		if err == nil || !strings.Contains(err.Error(), `"b"`) {
			t.Fatalf("a pod of team-a in queue b: %v, want a refusal naming the queue", err)
		}
	})
	t.Run("pods bind and the queue counts them", func(t *testing.T) {
		submit(ctx, t, "team-a", "a", "a-0", "a-1", "a-2", "a-3")
		waitForQueue(ctx, t, "a", "4 running pods", func(q *schedulingv1beta1.Queue) bool { return q.Status.RunningPods == 4 })
	})
	t.Run("reclaim evicts the borrower's pods", func(t *testing.T) {
		submit(ctx, t, "team-b", "b", "b-0", "b-1")
	})
	t.Run("a Command from the scheduler's namespace suspends a queue", func(t *testing.T) {
		command(ctx, t, busv1alpha1.SuspendQueue, "b")
		waitForQueue(ctx, t, "b", "Suspended", func(q *schedulingv1beta1.Queue) bool {
			return q.Status.State == schedulingv1beta1.QueueStateSuspended
		})
		create(t, "pod b-2", func() error {
			_, err := cluster.Kube.CoreV1().Pods("team-b").Create(ctx, cpuPod("team-b", "b-2", "b"), metav1.CreateOptions{})
			return err
		})
		wantPods(ctx, t, "team-b", "held by the suspended queue", func(p *v1.Pod) bool {
			c := util.PodScheduledCondition(p)
			return c != nil && c.Reason == holdreport.QueueSuspended
		}, "b-2")
	})
	t.Run("a gang binds whole and its PodGroup runs", func(t *testing.T) { gang(ctx, t) })
	t.Run("a QueueUnit releases its Job", func(t *testing.T) { unit(ctx, t) })
	t.Run("a scheduler-plugins gang is taken once its CRD is installed", func(t *testing.T) { foreignGang(ctx, t) })
}

// foreignGang installs scheduler-plugins' PodGroup CRD while the binary runs and binds a gang of
// that API: the controller mirrors it and writes its status.
func foreignGang(ctx context.Context, t *testing.T) {
	if err := localcluster.InstallCRDsFrom(ctx, cluster.Config, gangcrds.FS, gangcrds.SchedulerPlugins); err != nil {
		t.Fatal(err)
	}
	sp := spclient.NewForConfigOrDie(queueclient.JSONConfig(cluster.Config))
	pg := &spv1alpha1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: "sp", Namespace: "team-a",
		Labels: map[string]string{schedulingv1beta1.QueueLabel: "a"}}, Spec: spv1alpha1.PodGroupSpec{MinMember: 2}}
	create(t, "scheduler-plugins PodGroup sp", func() error {
		_, err := sp.SchedulingV1alpha1().PodGroups("team-a").Create(ctx, pg, metav1.CreateOptions{})
		return err
	})
	for _, name := range []string{"sp-0", "sp-1"} {
		pod := util.MakePod("team-a", name).Label(spv1alpha1.PodGroupLabel, "sp").Req(map[v1.ResourceName]string{v1.ResourceCPU: "100m"}).Obj()
		create(t, "pod "+name, func() error {
			_, err := cluster.Kube.CoreV1().Pods("team-a").Create(ctx, pod, metav1.CreateOptions{})
			return err
		})
	}
	wantPods(ctx, t, "team-a", "bound", util.IsBound, "sp-0", "sp-1")
	for _, name := range []string{"sp-0", "sp-1"} {
		setRunning(ctx, t, "team-a", name)
	}
	poll(ctx, t, "scheduler-plugins PodGroup sp Running", func(ctx context.Context) (bool, error) {
		got, err := sp.SchedulingV1alpha1().PodGroups("team-a").Get(ctx, "sp", metav1.GetOptions{})
		return err == nil && got.Status.Phase == spv1alpha1.PodGroupRunning, err
	})
}

// gang adds room and binds a PodGroup of two. Its first pod comes before the PodGroup, as some job
// operators create them: the webhook looks for the group on the API server, and the scheduler holds
// the pod until the group exists.
func gang(ctx context.Context, t *testing.T) {
	create(t, "node n2", func() error {
		_, err := cluster.Kube.CoreV1().Nodes().Create(ctx, util.MakeNode("n2", "4", "8Gi"), metav1.CreateOptions{})
		return err
	})
	member := func(name string) {
		pod := cpuPod("team-a", name, "a")
		pod.Labels[schedulingv1beta1.PodGroupLabel] = "g"
		create(t, "pod "+name, func() error {
			_, err := cluster.Kube.CoreV1().Pods("team-a").Create(ctx, pod, metav1.CreateOptions{})
			return err
		})
	}
	member("g-0")
	pg := util.MakePodGroup("team-a", "g").MinMember(2).Queue("a").Obj()
	create(t, "PodGroup g", func() error {
		_, err := cluster.Queues.SchedulingV1beta1().PodGroups("team-a").Create(ctx, pg, metav1.CreateOptions{})
		return err
	})
	member("g-1")
	wantPods(ctx, t, "team-a", "bound", util.IsBound, "g-0", "g-1")
	for _, name := range []string{"g-0", "g-1"} {
		setRunning(ctx, t, "team-a", name)
	}
	poll(ctx, t, "PodGroup g Running", func(ctx context.Context) (bool, error) {
		got, err := cluster.Queues.SchedulingV1beta1().PodGroups("team-a").Get(ctx, "g", metav1.GetOptions{})
		return err == nil && got.Status.Phase == schedulingv1beta1.PodGroupRunning, err
	})
}

// unit queues a suspended Job through a QueueUnit: the controller dequeues the unit, owns it by the
// Job and un-suspends the Job.
func unit(ctx context.Context, t *testing.T) {
	job := util.MakeJob("team-a", "j", 1, true)
	create(t, "Job j", func() error {
		_, err := cluster.Kube.BatchV1().Jobs("team-a").Create(ctx, job, metav1.CreateOptions{})
		return err
	})
	u := util.MakeQueueUnit("team-a", "u", "a", "j").Resource(map[v1.ResourceName]string{v1.ResourceCPU: "500m"}).Obj()
	create(t, "QueueUnit u", func() error {
		_, err := cluster.Queues.SchedulingV1beta1().QueueUnits("team-a").Create(ctx, u, metav1.CreateOptions{})
		return err
	})
	poll(ctx, t, "QueueUnit u Dequeued and owned by its Job", func(ctx context.Context) (bool, error) {
		got, err := cluster.Queues.SchedulingV1beta1().QueueUnits("team-a").Get(ctx, "u", metav1.GetOptions{})
		return err == nil && got.Status.Phase == schedulingv1beta1.QueueUnitDequeued && len(got.OwnerReferences) == 1, err
	})
	poll(ctx, t, "Job j released", func(ctx context.Context) (bool, error) {
		got, err := cluster.Kube.BatchV1().Jobs("team-a").Get(ctx, "j", metav1.GetOptions{})
		return err == nil && got.Spec.Suspend != nil && !*got.Spec.Suspend, err
	})
}

// setRunning marks a bound pod Running, as its node's kubelet would.
func setRunning(ctx context.Context, t *testing.T, namespace, name string) {
	t.Helper()
	pod, err := cluster.Kube.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Status.Phase = v1.PodRunning
	if _, err := cluster.Kube.CoreV1().Pods(namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("pod %s/%s Running: %v", namespace, name, err)
	}
}

// cpuPod is a one-CPU pod of queue in namespace.
func cpuPod(namespace, name, queue string) *v1.Pod {
	return util.MakePod(namespace, name).Label(schedulingv1beta1.QueueLabel, queue).
		Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()
}

// submit creates one-CPU pods of queue and waits until they are bound.
func submit(ctx context.Context, t *testing.T, namespace, queue string, names ...string) {
	t.Helper()
	for _, name := range names {
		create(t, "pod "+name, func() error {
			_, err := cluster.Kube.CoreV1().Pods(namespace).Create(ctx, cpuPod(namespace, name, queue), metav1.CreateOptions{})
			return err
		})
	}
	wantPods(ctx, t, namespace, "bound", util.IsBound, names...)
}

// command sends a Command from the scheduler's own namespace and waits until it is consumed.
func command(ctx context.Context, t *testing.T, action busv1alpha1.Action, queue string) {
	t.Helper()
	cmd := &busv1alpha1.Command{
		ObjectMeta: metav1.ObjectMeta{Name: strings.ToLower(string(action)) + "-" + queue, Namespace: namespace},
		Spec:       busv1alpha1.CommandSpec{Action: action, Target: busv1alpha1.Target{Name: queue}},
	}
	create(t, "Command "+cmd.Name, func() error {
		_, err := cluster.Queues.BusV1alpha1().Commands(namespace).Create(ctx, cmd, metav1.CreateOptions{})
		return err
	})
	poll(ctx, t, "Command "+cmd.Name+" consumed", func(ctx context.Context) (bool, error) {
		_, err := cluster.Queues.BusV1alpha1().Commands(namespace).Get(ctx, cmd.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

func create(t *testing.T, what string, do func() error) {
	t.Helper()
	if err := do(); err != nil {
		t.Fatalf("create %s: %v", what, err)
	}
}

func wantPods(ctx context.Context, t *testing.T, namespace, what string, ok func(*v1.Pod) bool, names ...string) {
	t.Helper()
	if err := util.WaitForPods(ctx, cluster.Kube, namespace, names, settle, what, ok); err != nil {
		t.Fatal(err)
	}
}

func waitForQueue(ctx context.Context, t *testing.T, name, what string, ok func(*schedulingv1beta1.Queue) bool) {
	t.Helper()
	poll(ctx, t, fmt.Sprintf("queue %s %s", name, what), func(ctx context.Context) (bool, error) {
		q, err := cluster.Queues.SchedulingV1beta1().Queues().Get(ctx, name, metav1.GetOptions{})
		return err == nil && ok(q), err
	})
}

// poll waits up to settle for done; an error of done ends the wait.
func poll(ctx context.Context, t *testing.T, what string, done func(context.Context) (bool, error)) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, settle, true, done); err != nil {
		t.Fatalf("%s: not within %s: %v", what, settle, err)
	}
}
