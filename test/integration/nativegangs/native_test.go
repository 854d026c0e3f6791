// Package nativegangs tests the native gangs of the Workload API (scheduling.k8s.io/v1beta1
// PodGroups, pods naming them in spec.schedulingGroup) on a control plane of their own, started with
// the GenericWorkload feature gate and scheduling.k8s.io/v1beta1 on, as the scheduler it runs: 2
// nodes of 2 CPUs. kube-scheduler's pod-group cycle and its GangScheduling plugin (kept in the
// queue-scheduler profile) place the gang; queue-scheduler's plugins run beside them, admitting the
// group to its queue, counting it and reclaiming for it.
package nativegangs

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingapi "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/utils/ptr"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/gangsource"
	"github.com/queue-scheduler/queue-scheduler/pkg/localcluster"
	"github.com/queue-scheduler/queue-scheduler/pkg/metrics"
	"github.com/queue-scheduler/queue-scheduler/test/clustertest"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

var cluster *localcluster.Cluster

const settle = 2 * time.Minute

func TestMain(m *testing.M) {
	// The API server's test harness turns the gate on in this process too, where the scheduler
	// reads it. PodGroupProtection's finalizer is removed by a controller-manager, which this
	// control plane does not run.
	opts := localcluster.Options{APIServerFlags: []string{"--feature-gates=GenericWorkload=true",
		"--runtime-config=scheduling.k8s.io/v1beta1=true", "--disable-admission-plugins=PodGroupProtection"}}
	os.Exit(clustertest.RunWithCluster(m, opts, func(ctx context.Context, c *localcluster.Cluster) error {
		for i := range 2 {
			if _, err := c.Kube.CoreV1().Nodes().Create(ctx, util.MakeNode(fmt.Sprintf("node-%d", i), "2", "8Gi"), metav1.CreateOptions{}); err != nil {
				return err
			}
		}
		cluster = c
		return nil
	}))
}

func newNamespace(t *testing.T, name, queue string) string {
	t.Helper()
	name = clustertest.Named(t, name)
	ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{schedulingv1beta1.QueueAnnotation: queue}}}
	if _, err := cluster.Kube.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The next test starts once the pods are gone: a gang tried while they still hold the nodes would
	// be rejected for lack of room.
	t.Cleanup(func() {
		pods := cluster.Kube.CoreV1().Pods(name)
		if err := pods.DeleteCollection(context.Background(), metav1.DeleteOptions{GracePeriodSeconds: new(int64)}, metav1.ListOptions{}); err != nil {
			t.Errorf("delete the pods of namespace %s: %v", name, err)
			return
		}
		poll(t, "the pods of namespace "+name+" gone", func(ctx context.Context) (bool, error) {
			list, err := pods.List(ctx, metav1.ListOptions{})
			return err == nil && len(list.Items) == 0, nil
		}, func() string { return "" })
	})
	return name
}

// createQueue creates q, named for the test's run (clustertest.Named), and returns its name once it
// has a status.
func createQueue(t *testing.T, q *schedulingv1beta1.Queue) string {
	t.Helper()
	q.Name = clustertest.Named(t, q.Name)
	api := cluster.Queues.SchedulingV1beta1().Queues()
	if _, err := api.Create(context.Background(), q, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, "queue "+q.Name+" has a status", func(ctx context.Context) (bool, error) {
		got, err := api.Get(ctx, q.Name, metav1.GetOptions{})
		return err == nil && got.Status.State != "", nil
	}, func() string { return "" })
	return q.Name
}

func poll(t *testing.T, what string, ok func(context.Context) (bool, error), describe func() string) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, ok); err != nil {
		t.Fatalf("never %s: %s", what, describe())
	}
}

// podGroup is a native PodGroup with a gang policy of minCount, as the Job controller's
// WorkloadWithJob integration and Kueue create them (spec.schedulingPolicy.gang.minCount).
func podGroup(namespace, name string, minCount int32) *schedulingapi.PodGroup {
	return &schedulingapi.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: schedulingapi.PodGroupSpec{SchedulingPolicy: schedulingapi.PodGroupSchedulingPolicy{
			Gang: &schedulingapi.GangSchedulingPolicy{MinCount: minCount}}}}
}

// member is a one-CPU pod naming its native PodGroup in spec.schedulingGroup.
func member(namespace, group string, i int) *v1.Pod {
	pod := util.MakePod(namespace, fmt.Sprintf("%s-%d", group, i)).Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()
	pod.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: ptr.To(group)}
	return pod
}

func submit(t *testing.T, namespace, group string, minCount int32, pods int) {
	t.Helper()
	if _, err := cluster.Kube.SchedulingV1beta1().PodGroups(namespace).Create(context.Background(), podGroup(namespace, group, minCount), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range pods {
		if _, err := cluster.Kube.CoreV1().Pods(namespace).Create(context.Background(), member(namespace, group, i), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// bound counts the bound pods of each PodGroup, by the pod-group label admission gave them.
func bound(t *testing.T, namespace string) map[string]int {
	t.Helper()
	list, err := cluster.Kube.CoreV1().Pods(namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return util.BoundPerPodGroup(list.Items)
}

func waitBound(t *testing.T, namespace, what string, ok func(map[string]int) bool) {
	t.Helper()
	var last map[string]int
	poll(t, what, func(context.Context) (bool, error) {
		last = bound(t, namespace)
		return ok(last), nil
	}, func() string { return fmt.Sprintf("bound %v", last) })
}

// waitCondition waits for the native PodGroup's condition of that type to be status and say text.
func waitCondition(t *testing.T, namespace, name, conditionType string, status metav1.ConditionStatus, text string) {
	t.Helper()
	var last []metav1.Condition
	poll(t, fmt.Sprintf("PodGroup %s %s=%s %q", name, conditionType, status, text), func(ctx context.Context) (bool, error) {
		pg, err := cluster.Kube.SchedulingV1beta1().PodGroups(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = pg.Status.Conditions
		c := meta.FindStatusCondition(pg.Status.Conditions, conditionType)
		return c != nil && c.Status == status && strings.Contains(c.Message, text), nil
	}, func() string { return fmt.Sprintf("conditions %+v", last) })
}

// Two native gangs of 3 one-CPU pods on 4 CPUs, created interleaved: one binds whole and the other
// not at all; kube-scheduler writes PodGroupInitiallyScheduled on the first and queue-scheduler its
// QueueAdmitted; once the first is gone the second binds whole.
func TestNativeGangsRunWholeOneAfterTheOther(t *testing.T) {
	queue := createQueue(t, util.MakeQueue("native").Obj())
	ns := newNamespace(t, "whole", queue)
	for _, g := range []string{"ga", "gb"} {
		if _, err := cluster.Kube.SchedulingV1beta1().PodGroups(ns).Create(context.Background(), podGroup(ns, g, 3), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		for _, g := range []string{"ga", "gb"} {
			if _, err := cluster.Kube.CoreV1().Pods(ns).Create(context.Background(), member(ns, g, i), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var first, second string
	waitBound(t, ns, "one gang whole", func(b map[string]int) bool {
		first, second = "ga", "gb"
		if b["gb"] == 3 {
			first, second = "gb", "ga"
		}
		return b[first] == 3
	})
	if got := bound(t, ns)[second]; got != 0 {
		t.Fatalf("%d pods of gang %s bound beside gang %s", got, second, first)
	}
	waitCondition(t, ns, first, schedulingapi.PodGroupInitiallyScheduled, metav1.ConditionTrue, "")
	waitCondition(t, ns, first, gangsource.QueueAdmittedCondition, metav1.ConditionTrue, `admitted to queue "`+queue+`"`)
	wantRejectedAndReported(t, ns, queue, second)
	wantCounted(t, ns, queue, first, second)
	if err := cluster.Kube.CoreV1().Pods(ns).DeleteCollection(context.Background(), metav1.DeleteOptions{GracePeriodSeconds: new(int64)},
		metav1.ListOptions{LabelSelector: schedulingv1beta1.PodGroupLabel + "=" + first}); err != nil {
		t.Fatal(err)
	}
	waitBound(t, ns, "the second gang whole", func(b map[string]int) bool { return b[second] == 3 })
}

// A native gang that fits is placed by the pod-group cycle, which reserves its members tentatively
// and gives the reservations up before it binds them: that is no failure of the gang, which binds
// whole without a rejection counted (nor a denial, nor a GangUnschedulable report).
func TestNativeGangPlacedAtOnceIsNotRejected(t *testing.T) {
	queue := createQueue(t, util.MakeQueue("at-once").Obj())
	ns := newNamespace(t, "at-once", queue)
	submit(t, ns, "g", 2, 2)
	waitBound(t, ns, "the gang whole", func(b map[string]int) bool { return b["g"] == 2 })
	for _, reason := range []string{"MemberNotBound", "Unschedulable", "Timeout"} {
		// Counted in Unreserve and PostFilter, before any member binds.
		n, err := testutil.GetCounterMetricValue(metrics.GangRejections.WithLabelValues(queue, reason))
		if err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("a native gang placed at once counted %v rejections for %s", n, reason)
		}
	}
}

// wantRejectedAndReported checks that the gang the pod-group cycle could not place was rejected as
// a gang of any other API is: counted, and reported with a GangUnschedulable Warning event on its
// mirror that says why, Reclaim's refusal included.
func wantRejectedAndReported(t *testing.T, ns, queue, group string) {
	t.Helper()
	var rejections float64
	var reasons []string
	poll(t, "gang "+group+" rejected and reported", func(ctx context.Context) (bool, error) {
		n, err := testutil.GetCounterMetricValue(metrics.GangRejections.WithLabelValues(queue, "Unschedulable"))
		if err != nil {
			return false, err
		}
		rejections = n
		events, err := cluster.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=GangUnschedulable"})
		if err != nil {
			return false, err
		}
		reasons = reasons[:0]
		found := false
		for _, e := range events.Items {
			reasons = append(reasons, e.InvolvedObject.Name+": "+e.Message)
			found = found || (e.InvolvedObject.Name == group && strings.Contains(e.Message, "pod-group cycle could not place") && strings.Contains(e.Message, "reclaim cannot help"))
		}
		return n > 0 && found, nil
	}, func() string {
		return fmt.Sprintf("%v rejections counted; GangUnschedulable events %q", rejections, reasons)
	})
}

// A native gang enters its queue by the queue's rules: a queue that does not take the namespace
// refuses it, and the PodGroup's QueueAdmitted condition says why; its pods wait.
func TestNativeGangOfAQueueThatRefusesTheNamespace(t *testing.T) {
	queue := createQueue(t, util.MakeQueue("picky").Namespaces(map[string]string{"team": "picky"}).Obj())
	ns := newNamespace(t, "not-picky", queue)
	submit(t, ns, "g", 2, 2)
	waitCondition(t, ns, "g", gangsource.QueueAdmittedCondition, metav1.ConditionFalse, queue)
	if got := bound(t, ns)["g"]; got != 0 {
		t.Fatalf("%d pods bound of a gang its queue refused", got)
	}
}

// A queue below its share takes its room back for a native gang: a borrower fills the cluster, and
// the owner's gang of 2 binds whole.
func TestNativeGangReclaimsItsShare(t *testing.T) {
	borrower, owner := createQueue(t, util.MakeQueue("borrower").Obj()), createQueue(t, util.MakeQueue("owner").Obj())
	bns, ons := newNamespace(t, "borrower", borrower), newNamespace(t, "owner", owner)
	for i := range 5 {
		pod := util.MakePod(bns, fmt.Sprintf("b-%d", i)).Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()
		if _, err := cluster.Kube.CoreV1().Pods(bns).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitBound(t, bns, "the borrower holding the cluster", func(b map[string]int) bool { return b[""] == 4 })
	submit(t, ons, "trainer", 2, 2)
	waitBound(t, ons, "the owner's gang whole", func(b map[string]int) bool { return b["trainer"] == 2 })
	waitBound(t, bns, "the borrower at its share", func(b map[string]int) bool { return b[""] == 2 })
	// Taken for the gang as one preemptor, not for its members one by one.
	messages, err := util.WaitForEventMessages(context.Background(), cluster.Kube, bns, "Preempted", 2, settle)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range messages {
		if !strings.Contains(m, "by podgroup "+ons+"/trainer ") {
			t.Errorf("victim not taken for the gang %s/trainer as one: %q", ons, m)
		}
	}
}

// The native API is kube-scheduler's too: a PodGroup becomes queue-scheduler's when it names a queue
// with queue-scheduler's queue label (at once, before any pod), or when a pod of queue-scheduler
// names it; one whose pods are another scheduler's is left alone.
func TestNativePodGroupsOfOtherSchedulersAreLeftAlone(t *testing.T) {
	queue := createQueue(t, util.MakeQueue("shared").Obj())
	ns := newNamespace(t, "shared", queue)
	other := podGroup(ns, "other", 2)
	if _, err := cluster.Kube.SchedulingV1beta1().PodGroups(ns).Create(context.Background(), other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		pod := member(ns, "other", i)
		pod.Spec.SchedulerName = v1.DefaultSchedulerName
		if _, err := cluster.Kube.CoreV1().Pods(ns).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	labelled := podGroup(ns, "labelled", 2)
	labelled.Labels = map[string]string{schedulingv1beta1.QueueLabel: queue}
	if _, err := cluster.Kube.SchedulingV1beta1().PodGroups(ns).Create(context.Background(), labelled, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitCondition(t, ns, "labelled", gangsource.QueueAdmittedCondition, metav1.ConditionTrue, `admitted to queue "`+queue+`"`)
	if _, err := cluster.Queues.SchedulingV1beta1().PodGroups(ns).Get(context.Background(), "other", metav1.GetOptions{}); err == nil {
		t.Error("a native PodGroup of another scheduler's pods is mirrored")
	}
	pg, err := cluster.Kube.SchedulingV1beta1().PodGroups(ns).Get(context.Background(), "other", metav1.GetOptions{})
	if err != nil || meta.FindStatusCondition(pg.Status.Conditions, gangsource.QueueAdmittedCondition) != nil {
		t.Errorf("a native PodGroup of another scheduler's pods: %v, conditions %+v", err, pg.Status.Conditions)
	}
}

// wantCounted checks that the queue's status counts both gangs, the running one as Running once its
// pods run, and that kubectl queue jobs lists them as PodGroups of the native source.
func wantCounted(t *testing.T, ns, queue, running, waiting string) {
	t.Helper()
	for _, p := range listMembers(t, ns, running) {
		p.Status.Phase = v1.PodRunning
		if _, err := cluster.Kube.CoreV1().Pods(ns).UpdateStatus(context.Background(), &p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var status schedulingv1beta1.QueueStatus
	poll(t, "queue "+queue+" counting a Running and an Inqueue PodGroup", func(ctx context.Context) (bool, error) {
		q, err := cluster.Queues.SchedulingV1beta1().Queues().Get(ctx, queue, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		status = q.Status
		return q.Status.Running == 1 && q.Status.Inqueue == 1, nil
	}, func() string { return fmt.Sprintf("status %+v", status) })
	out, err := util.KubectlQueue(context.Background(), cluster.Kubeconfig, "jobs", queue)
	if err != nil {
		t.Fatalf("kubectl queue jobs %s: %v\n%s", queue, err, out)
	}
	for _, name := range []string{running, waiting} {
		if !strings.Contains(out, name) || !strings.Contains(out, "PodGroup (kubernetes)") {
			t.Errorf("kubectl queue jobs %s does not list %s as a PodGroup (kubernetes):\n%s", queue, name, out)
		}
	}
}

// listMembers lists the bound pods of group.
func listMembers(t *testing.T, namespace, group string) []v1.Pod {
	t.Helper()
	list, err := cluster.Kube.CoreV1().Pods(namespace).List(context.Background(), metav1.ListOptions{LabelSelector: schedulingv1beta1.PodGroupLabel + "=" + group})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// A native gang whose pods came past the admission webhook (its configurations deleted, as before
// an install or during an outage) carries no pod-group label, and its PodGroup names no queue: its
// first pod still makes it queue-scheduler's. It binds whole, and its mirror counts its members.
func TestNativeGangPastTheWebhookRuns(t *testing.T) {
	queue := createQueue(t, util.MakeQueue("past").Obj())
	ns := newNamespace(t, "past-webhook", queue)
	if _, err := cluster.Kube.SchedulingV1beta1().PodGroups(ns).Create(context.Background(), podGroup(ns, "g", 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	util.WithoutAdmission(t, cluster.Kube, cluster.Queues, func() {
		for i := range 2 {
			if _, err := cluster.Kube.CoreV1().Pods(ns).Create(context.Background(), member(ns, "g", i), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	})
	var pods []v1.Pod
	poll(t, "both members bound", func(ctx context.Context) (bool, error) {
		list, err := cluster.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		pods = list.Items
		n := 0
		for _, p := range pods {
			if p.Labels[schedulingv1beta1.PodGroupLabel] != "" {
				return false, fmt.Errorf("pod %s carries the pod-group label: the webhook was not away", p.Name)
			}
			if p.Spec.NodeName != "" {
				n++
			}
		}
		return n == 2, nil
	}, func() string {
		var out []string
		for _, p := range pods {
			out = append(out, p.Name+" on "+p.Spec.NodeName)
		}
		return fmt.Sprint(out)
	})
	waitCondition(t, ns, "g", gangsource.QueueAdmittedCondition, metav1.ConditionTrue, `admitted to queue "`+queue+`"`)
	for _, p := range pods {
		p.Status.Phase = v1.PodRunning
		if _, err := cluster.Kube.CoreV1().Pods(ns).UpdateStatus(context.Background(), &p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var status schedulingv1beta1.PodGroupStatus
	poll(t, "the mirror counting 2 running members", func(ctx context.Context) (bool, error) {
		pg, err := cluster.Queues.SchedulingV1beta1().PodGroups(ns).Get(ctx, "g", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		status = pg.Status
		return status.Running == 2 && status.Phase == schedulingv1beta1.PodGroupRunning, nil
	}, func() string { return fmt.Sprintf("status %+v", status) })
}
