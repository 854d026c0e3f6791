package integration

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	busv1alpha1 "github.com/queue-scheduler/queue-scheduler/apis/bus/v1alpha1"
	"github.com/queue-scheduler/queue-scheduler/apis/config"
	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/holdreport"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// tenants is two teams, each with a queue that selects its namespaces by label:
//
//	namespace <test>-a (tenant=<test>-a) ── queue <prefix>-a;  namespace <test>-b (tenant=<test>-b) ── queue <prefix>-b
type tenants struct {
	nsA, nsB string
	qA, qB   string
}

func setUpTenants(t *testing.T, prefix string) tenants {
	t.Helper()
	f := tenants{qA: prefix + "-a", qB: prefix + "-b"}
	f.nsA = newLabelledNamespace(t, "a", map[string]string{"tenant": prefix + "-a"}, nil)
	f.nsB = newLabelledNamespace(t, "b", map[string]string{"tenant": prefix + "-b"}, nil)
	cpu := map[v1.ResourceName]string{v1.ResourceCPU: "30"}
	createQueue(t, util.MakeQueue(f.qA).Namespaces(map[string]string{"tenant": prefix + "-a"}).Capability(cpu).Obj())
	createQueue(t, util.MakeQueue(f.qB).Namespaces(map[string]string{"tenant": prefix + "-b"}).Capability(cpu).Obj())
	return f
}

// newLabelledNamespace is newNamespace with labels.
func newLabelledNamespace(t *testing.T, suffix string, labels, annotations map[string]string) string {
	t.Helper()
	name := newNamespace(t, suffix, annotations)
	patchNamespaceLabels(t, name, labels)
	return name
}

func patchNamespaceLabels(t *testing.T, name string, labels map[string]string) {
	t.Helper()
	ns, err := cluster.Kube.CoreV1().Namespaces().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range labels {
		if ns.Labels == nil {
			ns.Labels = map[string]string{}
		}
		ns.Labels[k] = v
	}
	if _, err := cluster.Kube.CoreV1().Namespaces().Update(context.Background(), ns, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("label namespace %s: %v", name, err)
	}
}

func wantRefused(t *testing.T, what string, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s was admitted", what)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: error %q does not contain %q", what, err.Error(), w)
		}
	}
}

// A queue takes work only from the namespaces its selector selects: a tenant's pod, PodGroup or
// QueueUnit aimed at another team's queue is refused, naming that queue, the namespace and the
// selector, and nothing of that queue changes; aimed at its own queue, it is admitted.
func TestNamespaceSelectorDecidesWhoSubmits(t *testing.T) {
	f := setUpTenants(t, "ten-sel")
	ctx := context.Background()
	selector := `"tenant=ten-sel-b"`
	_, err := cluster.Kube.CoreV1().Pods(f.nsA).Create(ctx, queuePod(f.nsA, f.qB)("pod"), metav1.CreateOptions{})
	wantRefused(t, "pod to the other team's queue", err, `queue "ten-sel-b"`, `namespace "`+f.nsA+`"`, selector)
	_, err = cluster.Queues.SchedulingV1beta1().PodGroups(f.nsA).Create(ctx, util.MakePodGroup(f.nsA, "pg").Queue(f.qB).MinMember(1).Obj(), metav1.CreateOptions{})
	wantRefused(t, "PodGroup to the other team's queue", err, "spec.queue", `queue "ten-sel-b"`, `namespace "`+f.nsA+`"`, selector)
	_, err = cluster.Queues.SchedulingV1beta1().QueueUnits(f.nsA).Create(ctx, queueUnit(f.nsA, "unit", f.qB), metav1.CreateOptions{})
	wantRefused(t, "QueueUnit to the other team's queue", err, "spec.queue", `queue "ten-sel-b"`, selector)

	names := createPods(t, f.nsA, "own", 2, queuePod(f.nsA, f.qA))
	if _, err := cluster.Queues.SchedulingV1beta1().PodGroups(f.nsA).Create(ctx, util.MakePodGroup(f.nsA, "pg").Queue(f.qA).MinMember(1).Obj(), metav1.CreateOptions{}); err != nil {
		t.Fatalf("PodGroup to its own queue: %v", err)
	}
	waitBound(t, f.nsA, names)
	waitQueue(t, f.qA, "allocated 2 cpu", func(q *schedulingv1beta1.Queue) bool { return q.Status.Allocated.Cpu().Value() == 2 })
	b := getQueue(t, f.qB)
	if len(b.Status.Allocated) != 0 || b.Status.Pending != 0 || b.Status.Enqueued != 0 {
		t.Errorf("queue %s took the refused work: status %+v", f.qB, b.Status)
	}
}

// With the webhook bypassed, the scheduler itself refuses a pod whose queue does not select its
// namespace: the pod is held with a reason naming the rule and never bound, and a PodGroup stays
// Pending. Once the namespace is labelled for the queue, both are let in.
func TestSchedulerHoldsPodsOfUnselectedNamespaces(t *testing.T) {
	f := setUpTenants(t, "ten-hold")
	var names []string
	withoutAdmission(t, func() {
		names = createPods(t, f.nsA, "stray", 2, queuePod(f.nsA, f.qB))
		if _, err := cluster.Queues.SchedulingV1beta1().PodGroups(f.nsA).Create(context.Background(),
			util.MakePodGroup(f.nsA, "gang").Queue(f.qB).MinMember(1).Obj(), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	waitHeld(t, f.nsA, names, `queue "ten-hold-b" does not accept work from namespace "`+f.nsA+`"`)
	for _, name := range names {
		pod := getPod(t, f.nsA, name)
		if pod.Spec.NodeName != "" {
			t.Fatalf("pod %s was bound to %s", name, pod.Spec.NodeName)
		}
		if c := util.PodScheduledCondition(pod); c.Reason != holdreport.NamespaceNotAllowed {
			t.Errorf("pod %s: PodScheduled reason %q, want %s: no node can help it", name, c.Reason, holdreport.NamespaceNotAllowed)
		}
	}
	if b := getQueue(t, f.qB); len(b.Status.Allocated) != 0 {
		t.Errorf("queue %s allocated %v to a refused pod", f.qB, b.Status.Allocated)
	}
	waitPodGroupPhase(t, f.nsA, "gang", schedulingv1beta1.PodGroupPending)
	patchNamespaceLabels(t, f.nsA, map[string]string{"tenant": "ten-hold-b"})
	waitBound(t, f.nsA, names)
	waitPodGroupPhase(t, f.nsA, "gang", schedulingv1beta1.PodGroupInqueue)
}

// A pod's queue is decided once, at admission: a pod without a queue label gets its namespace's
// queue, and the label cannot change afterwards.
func TestQueueLabelIsWrittenAtAdmissionAndImmutable(t *testing.T) {
	createQueue(t, util.MakeQueue("ten-label-a").Obj())
	createQueue(t, util.MakeQueue("ten-label-b").Obj())
	ns := newNamespace(t, "", map[string]string{schedulingv1beta1.QueueAnnotation: "ten-label-a"})
	names := createPods(t, ns, "plain", 1, queuePod(ns, ""))
	pod := getPod(t, ns, names[0])
	if got := pod.Labels[schedulingv1beta1.QueueLabel]; got != "ten-label-a" {
		t.Fatalf("queue label %q, want the namespace's queue ten-label-a", got)
	}
	waitBound(t, ns, names)
	for _, patch := range []string{
		`{"metadata":{"labels":{"scheduling.queue-scheduler.io/queue":"ten-label-b"}}}`,
		`{"metadata":{"labels":{"scheduling.queue-scheduler.io/queue":null}}}`,
	} {
		_, err := cluster.Kube.CoreV1().Pods(ns).Patch(context.Background(), names[0], types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		wantRefused(t, "changing the queue label", err, "metadata.labels[scheduling.queue-scheduler.io/queue]", "cannot change")
	}
	if got := getPod(t, ns, names[0]).Labels[schedulingv1beta1.QueueLabel]; got != "ten-label-a" {
		t.Errorf("queue label %q after refused changes, want ten-label-a", got)
	}
	// Other labels still change freely.
	if _, err := cluster.Kube.CoreV1().Pods(ns).Patch(context.Background(), names[0], types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"step":"2"}}}`), metav1.PatchOptions{}); err != nil {
		t.Errorf("changing another label: %v", err)
	}
}

// warnings collects the admission warnings the API server returns.
type warnings struct {
	mu   sync.Mutex
	seen []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, text)
}

func (w *warnings) all() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.seen, "\n")
}

// A namespace opted in gets queue-scheduler for pods that name no scheduler; a pod that names a
// queue but another scheduler is admitted with a warning.
func TestManagedNamespaceAndSchedulerWarnings(t *testing.T) {
	createQueue(t, util.MakeQueue("ten-managed").Obj())
	managed := newLabelledNamespace(t, "managed", map[string]string{schedulingv1beta1.ManagedLabel: "true"},
		map[string]string{schedulingv1beta1.QueueAnnotation: "ten-managed"})
	other := newNamespace(t, "other", nil)
	cfg := rest.CopyConfig(cluster.Config)
	seen := &warnings{}
	cfg.WarningHandler = seen
	kube := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()

	plain := util.MakePod(managed, "plain").Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).SchedulerName("").Obj()
	// The API server learns of the namespace's label through its own informer before it calls the
	// webhook for the namespace.
	err := wait.PollUntilContextTimeout(ctx, util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		probe, err := kube.CoreV1().Pods(managed).Create(ctx, plain, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err == nil && probe.Spec.SchedulerName == schedulingv1beta1.SchedulerName, nil
	})
	if err != nil {
		t.Fatalf("pods of managed namespace %s never got schedulerName %s", managed, schedulingv1beta1.SchedulerName)
	}
	created, err := kube.CoreV1().Pods(managed).Create(ctx, plain, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.Spec.SchedulerName != schedulingv1beta1.SchedulerName || created.Labels[schedulingv1beta1.QueueLabel] != "ten-managed" {
		t.Fatalf("pod in a managed namespace: schedulerName %q, queue label %q; want %s and ten-managed",
			created.Spec.SchedulerName, created.Labels[schedulingv1beta1.QueueLabel], schedulingv1beta1.SchedulerName)
	}
	waitBound(t, managed, []string{"plain"})
	daemon := util.MakePod(managed, "daemon").SchedulerName("").Obj()
	daemon.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent", UID: "uid-agent", Controller: ptr.To(true)}}
	created, err = kube.CoreV1().Pods(managed).Create(ctx, daemon, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.Spec.SchedulerName != v1.DefaultSchedulerName {
		t.Errorf("a DaemonSet's pod in a managed namespace got schedulerName %q; want it left to %s", created.Spec.SchedulerName, v1.DefaultSchedulerName)
	}
	if _, err := kube.CoreV1().Pods(other).Create(ctx, util.MakePod(other, "elsewhere").SchedulerName("").Obj(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := getPod(t, other, "elsewhere").Spec.SchedulerName; got != v1.DefaultSchedulerName {
		t.Errorf("pod in a namespace not opted in: schedulerName %q, want %s", got, v1.DefaultSchedulerName)
	}
	if s := seen.all(); s != "" {
		t.Errorf("warnings for pods that name no queue: %s", s)
	}

	mislabelled := util.MakePod(other, "mislabelled").Label(schedulingv1beta1.QueueLabel, "ten-managed").SchedulerName(v1.DefaultSchedulerName).Obj()
	if _, err := kube.CoreV1().Pods(other).Create(ctx, mislabelled, metav1.CreateOptions{}); err != nil {
		t.Fatalf("a pod naming a queue and another scheduler must be admitted: %v", err)
	}
	if s := seen.all(); !strings.Contains(s, `pod names queue "ten-managed" but spec.schedulerName "default-scheduler"`) {
		t.Errorf("warnings %q: want one naming the queue and the scheduler", s)
	}
}

// A Command may operate only a queue that selects its namespace, unless it comes from the
// scheduler's own namespace; with the webhook bypassed, the controller refuses it too.
func TestCommandsOperateOnlyTheirTeamsQueues(t *testing.T) {
	f := setUpTenants(t, "ten-cmd")
	command := func(namespace string) *busv1alpha1.Command {
		return &busv1alpha1.Command{ObjectMeta: metav1.ObjectMeta{GenerateName: "cmd-", Namespace: namespace},
			Spec: busv1alpha1.CommandSpec{Action: busv1alpha1.SuspendQueue, Target: busv1alpha1.Target{Name: f.qA}}}
	}
	_, err := cluster.Queues.BusV1alpha1().Commands(f.nsB).Create(context.Background(), command(f.nsB), metav1.CreateOptions{})
	wantRefused(t, "a Command against another team's queue", err, "spec.target.name",
		"a Command may operate only a queue that selects its namespace", `queue "ten-cmd-a" does not accept work from namespace "`+f.nsB+`"`)

	var sneaked *busv1alpha1.Command
	withoutAdmission(t, func() {
		sneaked, err = cluster.Queues.BusV1alpha1().Commands(f.nsB).Create(context.Background(), command(f.nsB), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	})
	if err := util.WaitForEvent(context.Background(), cluster.Kube, f.nsB, sneaked.Name, "CommandForbidden", "may operate only a queue that selects its namespace", settle); err != nil {
		t.Fatal(err)
	}
	if q := getQueue(t, f.qA); q.Spec.State == schedulingv1beta1.QueueStateSuspended {
		t.Fatalf("a forbidden Command suspended queue %s", f.qA)
	}

	sendCommand(t, f.nsA, busv1alpha1.SuspendQueue, f.qA)
	waitSpecState(t, f.qA, schedulingv1beta1.QueueStateSuspended)
	sendCommand(t, config.DefaultNamespace(), busv1alpha1.ResumeQueue, f.qA)
	waitSpecState(t, f.qA, schedulingv1beta1.QueueStateOpen)
}

// Work that could never fit its queue is refused at admission, naming both quantities.
func TestNeverFittingWorkIsRefused(t *testing.T) {
	createQueue(t, util.MakeQueue("ten-fit-org").Capability(map[v1.ResourceName]string{v1.ResourceCPU: "20"}).Obj())
	createQueue(t, util.MakeQueue("ten-fit").Parent("ten-fit-org").Capability(map[v1.ResourceName]string{v1.ResourceCPU: "15"}).Obj())
	ns := newNamespace(t, "", nil)
	ctx := context.Background()
	pg := util.MakePodGroup(ns, "too-big").Queue("ten-fit").MinMember(4).Obj()
	pg.Spec.MinResources = util.ResourceList(map[v1.ResourceName]string{v1.ResourceCPU: "40"})
	_, err := cluster.Queues.SchedulingV1beta1().PodGroups(ns).Create(ctx, pg, metav1.CreateOptions{})
	wantRefused(t, "PodGroup above its queue's capability", err, `spec.minResources[cpu]: Invalid value: "40"`,
		`capability of queue "ten-fit": cpu 40 requested > 15`, `capability of queue "ten-fit-org": cpu 40 requested > 20`)
	unit := queueUnit(ns, "too-big", "ten-fit")
	unit.Spec.Resource = util.ResourceList(map[v1.ResourceName]string{v1.ResourceCPU: "16"})
	_, err = cluster.Queues.SchedulingV1beta1().QueueUnits(ns).Create(ctx, unit, metav1.CreateOptions{})
	wantRefused(t, "QueueUnit above its queue's capability", err, `spec.resource[cpu]: Invalid value: "16"`,
		`capability of queue "ten-fit": cpu 16 requested > 15`)
	if _, err := cluster.Queues.SchedulingV1beta1().PodGroups(ns).Get(ctx, "too-big", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused PodGroup was stored: %v", err)
	}
	pg.Spec.MinResources = util.ResourceList(map[v1.ResourceName]string{v1.ResourceCPU: "15"})
	if _, err := cluster.Queues.SchedulingV1beta1().PodGroups(ns).Create(ctx, pg, metav1.CreateOptions{}); err != nil {
		t.Errorf("a PodGroup that fits: %v", err)
	}
}

// Two concurrent re-parentings, each valid alone, make a cycle together. Whatever gets past admission
// is detected by the controller: both queues read Unknown with a condition naming the cycle. Run 50
// times; a cycle stored with the webhook away, as in an outage, is detected too, so that the test
// sees a stored cycle detected however the races fall.
func TestConcurrentReparentingNeverLeavesAnUndetectedCycle(t *testing.T) {
	createQueue(t, util.MakeQueue("ten-cyc-1").Obj())
	createQueue(t, util.MakeQueue("ten-cyc-2").Obj())
	moves := [][2]string{{"ten-cyc-1", "ten-cyc-2"}, {"ten-cyc-2", "ten-cyc-1"}}
	reparent := func(move [2]string) error {
		_, err := queues().Patch(context.Background(), move[0], types.MergePatchType,
			[]byte(`{"spec":{"parent":"`+move[1]+`"}}`), metav1.PatchOptions{})
		return err
	}
	withoutAdmission(t, func() {
		for _, move := range moves {
			if err := reparent(move); err != nil {
				t.Fatalf("re-parent %s under %s without admission: %v", move[0], move[1], err)
			}
		}
	})
	waitCycleDetected(t)
	resetParents(t, "without admission")
	stored := 0
	for i := range 50 {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for j, move := range moves {
			wg.Go(func() { errs[j] = reparent(move) })
		}
		wg.Wait()
		if errs[0] == nil && errs[1] == nil {
			stored++
			waitCycleDetected(t)
		} else if errs[0] != nil && errs[1] != nil {
			t.Fatalf("round %d: both re-parentings refused: %v; %v", i, errs[0], errs[1])
		}
		resetParents(t, fmt.Sprintf("round %d", i))
	}
	for _, name := range []string{"ten-cyc-1", "ten-cyc-2"} {
		waitStatusState(t, name, schedulingv1beta1.QueueStateOpen)
	}
	t.Logf("a cycle got past admission in %d of 50 rounds; each was detected", stored)
}

// waitCycleDetected waits until both queues of the cycle read Unknown, with a ParentCycle
// condition of their current generation.
func waitCycleDetected(t *testing.T) {
	t.Helper()
	for _, name := range []string{"ten-cyc-1", "ten-cyc-2"} {
		waitQueue(t, name, "Unknown with a ParentCycle condition", func(q *schedulingv1beta1.Queue) bool {
			c := activeCondition(q)
			return q.Status.State == schedulingv1beta1.QueueStateUnknown && c != nil && c.Reason == "ParentCycle" &&
				c.ObservedGeneration == q.Generation && strings.Contains(c.Message, "its parent chain is a cycle")
		})
	}
}

// resetParents puts both queues of the cycle back under the root.
func resetParents(t *testing.T, when string) {
	t.Helper()
	for _, name := range []string{"ten-cyc-1", "ten-cyc-2"} {
		if _, err := queues().Patch(context.Background(), name, types.MergePatchType, []byte(`{"spec":{"parent":null}}`), metav1.PatchOptions{}); err != nil {
			t.Fatalf("%s: reset %s: %v", when, name, err)
		}
	}
}

func activeCondition(q *schedulingv1beta1.Queue) *metav1.Condition {
	for i := range q.Status.Conditions {
		if q.Status.Conditions[i].Type == "Active" {
			return &q.Status.Conditions[i]
		}
	}
	return nil
}

// A queue that holds pods, even without PodGroups or QueueUnits, cannot become a parent.
func TestQueueHoldingPodsCannotBecomeAParent(t *testing.T) {
	createQueue(t, util.MakeQueue("ten-pods").Obj())
	ns := newNamespace(t, "", nil)
	waitBound(t, ns, createPods(t, ns, "p", 1, queuePod(ns, "ten-pods")))
	_, err := queues().Create(context.Background(), util.MakeQueue("ten-pods-child").Parent("ten-pods").Obj(), metav1.CreateOptions{})
	wantRefused(t, "a child of a queue holding pods", err, "spec.parent", `queue "ten-pods" holds work (PodGroups, QueueUnits or pods)`)
	if _, err := queues().Get(context.Background(), "ten-pods-child", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused queue was stored: %v", err)
	}
}

// Narrowing a queue's selector evicts nothing: the pods it runs keep running, and only new work from
// the namespace it no longer selects is refused.
func TestNarrowedSelectorKeepsRunningWork(t *testing.T) {
	f := setUpTenants(t, "ten-narrow")
	running := createPods(t, f.nsA, "running", 2, queuePod(f.nsA, f.qA))
	waitBound(t, f.nsA, running)
	if _, err := queues().Patch(context.Background(), f.qA, types.MergePatchType,
		[]byte(`{"spec":{"namespaceSelector":{"matchLabels":{"tenant":"someone-else"}}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		_, err := cluster.Kube.CoreV1().Pods(f.nsA).Create(ctx, queuePod(f.nsA, f.qA)("late"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil && strings.Contains(err.Error(), `queue "ten-narrow-a" does not accept work from namespace`), nil
	})
	if err != nil {
		t.Fatalf("new work from a namespace the queue no longer selects was still admitted after %s", settle)
	}
	for _, name := range running {
		pod := getPod(t, f.nsA, name)
		if pod.Spec.NodeName == "" || pod.DeletionTimestamp != nil {
			t.Errorf("running pod %s was disturbed by the narrowed selector: node %q, deleting %v", name, pod.Spec.NodeName, pod.DeletionTimestamp)
		}
	}
	waitQueue(t, f.qA, "still counting its running pods", func(q *schedulingv1beta1.Queue) bool { return q.Status.Allocated.Cpu().Value() == 2 })
}

// Work that got past a bypassed webhook from a namespace its queue does not select waits, each kind
// saying why: pods are held, a PodGroup stays Pending, a QueueUnit stays Enqueued. Widening the queue's
// selector lets all of it in.
func TestUnselectedWorkWaitsUntilTheSelectorWidens(t *testing.T) {
	f := setUpTenants(t, "ten-widen")
	ctx := context.Background()
	var pods []string
	withoutAdmission(t, func() {
		pods = createPods(t, f.nsA, "stray", 1, queuePod(f.nsA, f.qB))
		if _, err := cluster.Queues.SchedulingV1beta1().PodGroups(f.nsA).Create(ctx,
			util.MakePodGroup(f.nsA, "gang").Queue(f.qB).MinMember(1).Obj(), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		createJob(t, f.nsA, "job", 1, true)
		createUnit(t, util.MakeQueueUnit(f.nsA, "job", f.qB, "job").Resource(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj())
	})
	refusal := `queue "ten-widen-b" does not accept work from namespace "` + f.nsA + `"`
	waitHeld(t, f.nsA, pods, refusal)
	waitUnit(t, f.nsA, "job", "Enqueued for its namespace", enqueuedWith(refusal))
	err := wait.PollUntilContextTimeout(ctx, util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		pg, err := cluster.Queues.SchedulingV1beta1().PodGroups(f.nsA).Get(ctx, "gang", metav1.GetOptions{})
		if err != nil || pg.Status.Phase != schedulingv1beta1.PodGroupPending {
			return false, nil
		}
		for _, c := range pg.Status.Conditions {
			if strings.Contains(c.Message, refusal) {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("PodGroup never said it waits for its namespace within %s", settle)
	}

	if _, err := queues().Patch(ctx, f.qB, types.MergePatchType,
		[]byte(`{"spec":{"namespaceSelector":{"matchLabels":null,"matchExpressions":[{"key":"tenant","operator":"In","values":["ten-widen-a","ten-widen-b"]}]}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitBound(t, f.nsA, pods)
	waitPodGroupPhase(t, f.nsA, "gang", schedulingv1beta1.PodGroupInqueue)
	waitUnit(t, f.nsA, "job", "Dequeued once its namespace is selected", isDequeued)
}
