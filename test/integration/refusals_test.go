package integration

import (
	"context"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned"
	"github.com/queue-scheduler/queue-scheduler/pkg/holdreport"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// warnedClients are clients of the cluster whose warnings land in the returned collector.
func warnedClients(t *testing.T) (kubernetes.Interface, versioned.Interface, *warnings) {
	t.Helper()
	w := &warnings{}
	config := rest.CopyConfig(cluster.Config)
	config.WarningHandler = w
	kube := kubernetes.NewForConfigOrDie(config)
	config.ContentType = "application/json"
	return kube, versioned.NewForConfigOrDie(config), w
}

// jobOf is a Job of one pod of queue-scheduler asking for cpu, in queue (no label when empty).
func jobOf(namespace, name, queue, cpu string) *batchv1.Job {
	job := util.MakeJob(namespace, name, 1, false)
	containers := job.Spec.Template.Spec.Containers
	containers[len(containers)-1].Resources = v1.ResourceRequirements{Requests: util.ResourceList(map[v1.ResourceName]string{v1.ResourceCPU: cpu})}
	if queue != "" {
		job.Spec.Template.Labels = map[string]string{schedulingv1beta1.QueueLabel: queue}
	}
	return job
}

// A pod, or a Job's pod template, that asks on its own for more than its queue (or an ancestor)
// may ever hold is refused at admission with the numbers, as PodGroups and QueueUnits are; the Job
// is not stored.
func TestNeverFittingPodsAndJobsAreRefused(t *testing.T) {
	createQueue(t, util.MakeQueue("nf-org").Capability(map[v1.ResourceName]string{v1.ResourceCPU: "20"}).Obj())
	createQueue(t, util.MakeQueue("nf-team").Parent("nf-org").Capability(map[v1.ResourceName]string{v1.ResourceCPU: "16"}).Obj())
	ns := newNamespace(t, "", nil)
	ctx := context.Background()
	pod := util.MakePod(ns, "big").Label(schedulingv1beta1.QueueLabel, "nf-team").Req(map[v1.ResourceName]string{v1.ResourceCPU: "40"}).Obj()
	_, err := cluster.Kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	wantRefused(t, "a pod above its queue's capability", err, `spec.containers[*].resources.requests[cpu]: Invalid value: "40"`,
		`capability of queue "nf-team": cpu 40 requested > 16`, `capability of queue "nf-org": cpu 40 requested > 20`)
	_, err = cluster.Kube.BatchV1().Jobs(ns).Create(ctx, jobOf(ns, "big", "nf-team", "18"), metav1.CreateOptions{})
	wantRefused(t, "a Job whose pods exceed their queue's capability", err, `Job "`+ns+`/big"`,
		`spec.template.spec.containers[*].resources.requests[cpu]: Invalid value: "18"`, `capability of queue "nf-team": cpu 18 requested > 16`)
	if _, err := cluster.Kube.BatchV1().Jobs(ns).Get(ctx, "big", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused Job was stored: %v", err)
	}
	if _, err := cluster.Kube.BatchV1().Jobs(ns).Create(ctx, jobOf(ns, "fits", "nf-team", "16"), metav1.CreateOptions{}); err != nil {
		t.Errorf("a Job whose pods fit: %v", err)
	}
}

// A refusal for a queue that does not exist names the closest queue and the queues that take the
// namespace's work, its team's first; a Job with that slip is refused at creation.
func TestUnknownQueueRefusalSaysWhereToGo(t *testing.T) {
	createQueue(t, util.MakeQueue("uq-team-a").Namespaces(map[string]string{"uq-team": "a"}).Obj())
	ns := newNamespace(t, "", nil)
	ctx := context.Background()
	patch := `{"metadata":{"labels":{"uq-team":"a"}}}`
	if _, err := cluster.Kube.CoreV1().Namespaces().Patch(ctx, ns, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := util.MakePod(ns, "slip").Label(schedulingv1beta1.QueueLabel, "uq-team-aa").Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()
	_, err := cluster.Kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	wantRefused(t, "a pod naming a missing queue", err, `Not found: "uq-team-aa": no queue of that name exists; did you mean "uq-team-a"?`,
		`queues that take work from namespace "`+ns+`": uq-team-a, `)
	_, err = cluster.Kube.BatchV1().Jobs(ns).Create(ctx, jobOf(ns, "slip", "uq-team-aa", "1"), metav1.CreateOptions{})
	wantRefused(t, "a Job naming a missing queue", err, `spec.template.metadata.labels[scheduling.queue-scheduler.io/queue]: Not found: "uq-team-aa"`,
		`did you mean "uq-team-a"?`)
	other := jobOf(ns, "other-scheduler", "uq-team-aa", "1")
	other.Spec.Template.Spec.SchedulerName = v1.DefaultSchedulerName
	if _, err := cluster.Kube.BatchV1().Jobs(ns).Create(ctx, other, metav1.CreateOptions{}); err != nil {
		t.Errorf("a Job of another scheduler is not queue-scheduler's to judge: %v", err)
	}
	// Another team's queue is never suggested to this namespace.
	createQueue(t, util.MakeQueue("uq-team-b").Namespaces(map[string]string{"uq-team": "b"}).Obj())
	_, err = cluster.Kube.BatchV1().Jobs(ns).Create(ctx, jobOf(ns, "other-team", "uq-team-bb", "1"), metav1.CreateOptions{})
	wantRefused(t, "a Job naming a missing queue near another team's", err, `Not found: "uq-team-bb": no queue of that name exists; did you mean "uq-team-a"?`)
	if err != nil && strings.Contains(err.Error(), `"uq-team-b"`) {
		t.Errorf("the refusal names another team's queue: %v", err)
	}
}

// A leaf queue created without a namespace selector, and a Job naming a PodGroup not created yet,
// are admitted with a warning that says what follows.
func TestAdmittedWithAWarning(t *testing.T) {
	kube, queues, seen := warnedClients(t)
	ctx := context.Background()
	q := util.MakeQueue("warn-no-selector").NoNamespaces().Obj()
	if _, err := queues.SchedulingV1beta1().Queues().Create(ctx, q, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = queues.SchedulingV1beta1().Queues().Delete(context.Background(), q.Name, metav1.DeleteOptions{})
	})
	if want := `queue "warn-no-selector" has no spec.namespaceSelector: it accepts work from no namespace`; !strings.Contains(seen.all(), want) {
		t.Errorf("warnings %q, want one containing %q", seen.all(), want)
	}
	ns := newNamespace(t, "", nil)
	job := jobOf(ns, "early", "", "1")
	job.Spec.Template.Labels = map[string]string{schedulingv1beta1.PodGroupLabel: "later"}
	if _, err := kube.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if want := `PodGroup ` + ns + `/later does not exist (yet): the pods wait, as PodGroupMissing`; !strings.Contains(seen.all(), want) {
		t.Errorf("warnings %q, want one containing %q", seen.all(), want)
	}
	// A Job whose pods name a queue but another scheduler: nobody queues them.
	other := jobOf(ns, "other-scheduler", "default", "1")
	other.Spec.Template.Spec.SchedulerName = v1.DefaultSchedulerName
	if _, err := kube.BatchV1().Jobs(ns).Create(ctx, other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if want := `the Job's pods name queue "default" but spec.template.spec.schedulerName "default-scheduler": queue-scheduler does not schedule them`; !strings.Contains(seen.all(), want) {
		t.Errorf("warnings %q, want one containing %q", seen.all(), want)
	}
	// A suspended Job waits for the QueueUnit that decides its queue, which may come after it.
	suspended := jobOf(ns, "before-its-unit", "no-such-queue", "1")
	suspended.Spec.Suspend = ptr.To(true)
	if _, err := kube.BatchV1().Jobs(ns).Create(ctx, suspended, metav1.CreateOptions{}); err != nil {
		t.Fatalf("a suspended Job created before its QueueUnit: %v", err)
	}
	if want := `a QueueUnit created for this suspended Job decides its queue; without one its pods would be refused: ` +
		`spec.template.metadata.labels[scheduling.queue-scheduler.io/queue]: Not found: "no-such-queue"`; !strings.Contains(seen.all(), want) {
		t.Errorf("warnings %q, want one containing %q", seen.all(), want)
	}
}

// A pod admitted under a capability that is lowered below its request before it is scheduled waits
// with the reason ExceedsCapability, which no node can help, and binds once the capability is
// raised again.
func TestLoweredCapabilityHoldsWithExceedsCapability(t *testing.T) {
	createQueue(t, util.MakeQueue("lowered").State(schedulingv1beta1.QueueStateSuspended).
		Capability(map[v1.ResourceName]string{v1.ResourceCPU: "8"}).Obj())
	ns := newNamespace(t, "", nil)
	names := createPods(t, ns, "six", 1, func(name string) *v1.Pod {
		return util.MakePod(ns, name).Label(schedulingv1beta1.QueueLabel, "lowered").Req(map[v1.ResourceName]string{v1.ResourceCPU: "6"}).Obj()
	})
	ctx := context.Background()
	capability := func(cpu string) {
		t.Helper()
		patch := `{"spec":{"capability":{"cpu":"` + cpu + `"}}}`
		if _, err := queues().Patch(ctx, "lowered", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	capability("4")
	setQueueState(t, "lowered", schedulingv1beta1.QueueStateOpen)
	err := util.WaitForPods(ctx, cluster.Kube, ns, names, settle, "held with ExceedsCapability", func(pod *v1.Pod) bool {
		c := util.PodScheduledCondition(pod)
		return pod.Spec.NodeName == "" && c != nil && c.Reason == holdreport.ExceedsCapability &&
			c.Message == `the request exceeds the capability of queue "lowered": cpu 6 requested > 4; it cannot run until the capability is raised`
	})
	if err != nil {
		t.Fatal(err)
	}
	waitViewServed(t)
	if out, err := util.KubectlQueue(ctx, cluster.Kubeconfig, "eta", "--queue", "lowered"); err != nil || !strings.Contains(out, "never") {
		t.Errorf("kubectl queue eta: %v\n%s\nwant never for the pod held with ExceedsCapability", err, out)
	}
	capability("6")
	waitBound(t, ns, names)
}

// A gang without minResources whose members each fit their queue's capability but whose minMember
// ask together for more is held, every member with the reason ExceedsCapability and the gang's
// numbers, rather than reserving members that can never be joined by the rest; a capability raised
// lets it run whole.
func TestGangAboveItsCapabilityHoldsWithExceedsCapability(t *testing.T) {
	createQueue(t, util.MakeQueue("gang-cap").Capability(map[v1.ResourceName]string{v1.ResourceCPU: "5"}).Obj())
	ns := newNamespace(t, "", nil)
	ctx := context.Background()
	if _, err := cluster.Queues.SchedulingV1beta1().PodGroups(ns).Create(ctx,
		util.MakePodGroup(ns, "trio").Queue("gang-cap").MinMember(3).Obj(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	names := createPods(t, ns, "trio", 3, func(name string) *v1.Pod {
		return util.MakePod(ns, name).Label(schedulingv1beta1.PodGroupLabel, "trio").Req(map[v1.ResourceName]string{v1.ResourceCPU: "2"}).Obj()
	})
	want := `podgroup ` + ns + `/trio cannot run its 3 members together: the request exceeds the capability of queue "gang-cap": cpu 6 requested > 5; it cannot run until the capability is raised`
	err := util.WaitForPods(ctx, cluster.Kube, ns, names, settle, "held with ExceedsCapability", func(pod *v1.Pod) bool {
		c := util.PodScheduledCondition(pod)
		return pod.Spec.NodeName == "" && c != nil && c.Reason == holdreport.ExceedsCapability && c.Message == want
	})
	if err != nil {
		t.Fatal(err)
	}
	// The PodGroup, the live view and eta say so for the gang, whose members each fit on their own.
	waitPodGroupCondition(t, ns, "trio", "Unschedulable with ExceedsCapability", func(c *metav1.Condition) bool {
		return c != nil && c.Status == metav1.ConditionTrue && c.Reason == holdreport.ExceedsCapability && c.Message == want
	})
	waitPendingList(t, waitViewServed(t), "gang-cap", "the gang with its ExceedsCapability", func(items []visibilityv1beta1.PendingWorkload) bool {
		return len(items) == 1 && items[0].Workload.Kind == visibilityv1beta1.WorkloadPodGroup && items[0].Reason == holdreport.ExceedsCapability && items[0].Message == want
	})
	if out, err := util.KubectlQueue(ctx, cluster.Kubeconfig, "eta", "--queue", "gang-cap"); err != nil || !strings.Contains(out, "never") {
		t.Errorf("kubectl queue eta: %v\n%s\nwant never", err, out)
	}
	patch := `{"spec":{"capability":{"cpu":"6"}}}`
	if _, err := queues().Patch(ctx, "gang-cap", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitBound(t, ns, names)
	waitPodGroupCondition(t, ns, "trio", "its Unschedulable condition ended", func(c *metav1.Condition) bool {
		return c != nil && c.Status == metav1.ConditionFalse
	})
}

// waitPodGroupCondition waits until ok holds for the PodGroup's Unschedulable condition (nil when
// it has none).
func waitPodGroupCondition(t *testing.T, namespace, name, what string, ok func(*metav1.Condition) bool) {
	t.Helper()
	var last []metav1.Condition
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		pg, err := cluster.Queues.SchedulingV1beta1().PodGroups(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = pg.Status.Conditions
		return ok(meta.FindStatusCondition(pg.Status.Conditions, schedulingv1beta1.PodGroupUnschedulable)), nil
	})
	if err != nil {
		t.Fatalf("PodGroup %s/%s never %s: conditions %+v", namespace, name, what, last)
	}
}
