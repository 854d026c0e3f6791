package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/holdreport"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// Pods of an Open queue bind, whichever way they name the queue; pods that name none go to "default",
// which the scheduler creates at start.
func TestOpenQueuePodsBind(t *testing.T) {
	createQueue(t, util.MakeQueue("open-by-label").Obj())
	createQueue(t, util.MakeQueue("open-by-namespace").Obj())
	ns := newNamespace(t, "", nil)
	annotated := newNamespace(t, "annotated", map[string]string{schedulingv1beta1.QueueAnnotation: "open-by-namespace"})

	if _, err := cluster.Queues.SchedulingV1beta1().Queues().Get(context.Background(), schedulingv1beta1.DefaultQueue, metav1.GetOptions{}); err != nil {
		t.Fatalf("queue %q should exist from the scheduler's start: %v", schedulingv1beta1.DefaultQueue, err)
	}
	waitBound(t, ns, createPods(t, ns, "labelled", 3, queuePod(ns, "open-by-label")))
	waitBound(t, ns, createPods(t, ns, "no-queue", 3, queuePod(ns, "")))
	waitBound(t, annotated, createPods(t, annotated, "annotated", 3, queuePod(annotated, "")))
}

// A Suspended queue holds its pods, each with PodScheduled=False and a FailedScheduling event naming
// the queue, and lets them all bind soon after it is resumed.
func TestSuspendedQueueHoldsPodsUntilResumed(t *testing.T) {
	const queue = "suspended-team"
	createQueue(t, util.MakeQueue(queue).State(schedulingv1beta1.QueueStateSuspended).Obj())
	ns := newNamespace(t, "", nil)
	pods := createPods(t, ns, "held", 5, queuePod(ns, queue))

	waitHeld(t, ns, pods, fmt.Sprintf("queue %q is Suspended: no new resources are allocated", queue))
	for _, name := range pods {
		if pod := getPod(t, ns, name); util.IsBound(pod) {
			t.Fatalf("pod %s bound to %s while its queue is Suspended", name, pod.Spec.NodeName)
		}
	}

	setQueueState(t, queue, schedulingv1beta1.QueueStateOpen)
	waitBound(t, ns, pods)
}

// Pods that name a missing queue (admitted before the webhook was installed), or a PodGroup that does
// not exist yet, are held with that reason and scheduled once it appears.
func TestMissingQueueAndPodGroupHoldPods(t *testing.T) {
	const queue = "created-later"
	ns := newNamespace(t, "", nil)
	var byQueue []string
	withoutAdmission(t, func() { byQueue = createPods(t, ns, "no-such-queue", 2, queuePod(ns, queue)) })
	byGroup := createPods(t, ns, "no-such-group", 2, func(name string) *v1.Pod {
		return util.MakePod(ns, name).Label(schedulingv1beta1.PodGroupLabel, "later").
			Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()
	})

	waitHeld(t, ns, byQueue, fmt.Sprintf("queue %q does not exist", queue))
	waitHeld(t, ns, byGroup, fmt.Sprintf("PodGroup %q of pod %s/", "later", ns))

	createQueue(t, util.MakeQueue(queue).Obj())
	waitBound(t, ns, byQueue)
	pg := util.MakePodGroup(ns, "later").Queue(queue).Obj()
	if _, err := cluster.Queues.SchedulingV1beta1().PodGroups(ns).Create(context.Background(), pg, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create PodGroup: %v", err)
	}
	waitBound(t, ns, byGroup)
}

// Suspending a queue leaves its bound pods alone: same node, not deleted, while a new pod is held.
func TestSuspendLeavesBoundPodsAlone(t *testing.T) {
	const queue = "suspend-running"
	createQueue(t, util.MakeQueue(queue).Obj())
	ns := newNamespace(t, "", nil)
	running := createPods(t, ns, "running", 3, queuePod(ns, queue))
	waitBound(t, ns, running)
	nodes := map[string]string{}
	for _, name := range running {
		pod := getPod(t, ns, name)
		nodes[name] = pod.Spec.NodeName + "/" + string(pod.UID)
	}

	setQueueState(t, queue, schedulingv1beta1.QueueStateSuspended)
	// The controller reports the suspension from the accounting the scheduler reads: once it does, the
	// scheduler has seen it too, and a new pod is held.
	waitStatusState(t, queue, schedulingv1beta1.QueueStateSuspended)
	waitHeld(t, ns, createPods(t, ns, "after-suspend", 1, queuePod(ns, queue)), "is Suspended")

	for _, name := range running {
		pod := getPod(t, ns, name)
		if got := pod.Spec.NodeName + "/" + string(pod.UID); got != nodes[name] || pod.DeletionTimestamp != nil {
			t.Errorf("pod %s: node/uid %s, deleting %v; want %s untouched", name, got, pod.DeletionTimestamp != nil, nodes[name])
		}
	}
}

// Pods that were waiting when their queue was closed are scheduled: closing only stops new work. They
// first wait in a Suspended queue, where the hold is visible, and closing it releases them.
func TestClosedQueueSchedulesItsPendingPods(t *testing.T) {
	const queue = "closing-team"
	createQueue(t, util.MakeQueue(queue).State(schedulingv1beta1.QueueStateSuspended).Obj())
	ns := newNamespace(t, "", nil)
	pending := createPods(t, ns, "pending", 3, queuePod(ns, queue))
	waitHeld(t, ns, pending, "is Suspended")

	setQueueState(t, queue, schedulingv1beta1.QueueStateClosed)
	waitBound(t, ns, pending)
}

// A namespace whose queue annotation changes sends its new pods and PodGroups to the new queue,
// without a restart; a pod on a node and a PodGroup created before stay in the queue they were
// resolved to, and each queue's status shows what its own work holds.
func TestNamespaceQueueAnnotationChange(t *testing.T) {
	createQueue(t, util.MakeQueue("ns-before").Obj())
	createQueue(t, util.MakeQueue("ns-after").State(schedulingv1beta1.QueueStateSuspended).Obj())
	ns := newNamespace(t, "moving", map[string]string{schedulingv1beta1.QueueAnnotation: "ns-before"})
	first := createPods(t, ns, "first", 1, queuePod(ns, ""))
	waitBound(t, ns, first)
	groups := cluster.Queues.SchedulingV1beta1().PodGroups(ns)
	if _, err := groups.Create(context.Background(), util.MakePodGroup(ns, "early").Obj(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitQueueCounts(t, "ns-before", func(s schedulingv1beta1.QueueStatus) bool { return s.Inqueue == 1 })

	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"ns-after"}}}`, schedulingv1beta1.QueueAnnotation)
	if _, err := cluster.Kube.CoreV1().Namespaces().Patch(context.Background(), ns, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	// The scheduler's namespace cache may learn of the change a moment after the patch: a pod created
	// before it does joins the old queue. Pods are created one at a time until one is held by the new,
	// Suspended queue.
	var before, after []string
	for i := 0; len(after) == 0; i++ {
		if i == 20 {
			t.Fatalf("20 pods created after the annotation changed, none held by its new queue")
		}
		name := createPods(t, ns, fmt.Sprintf("later-%d", i), 1, queuePod(ns, ""))
		err := util.WaitForPods(context.Background(), cluster.Kube, ns, name, settle, "bound or held by ns-after",
			func(p *v1.Pod) bool {
				return util.IsBound(p) || util.HasUnschedulableMessage(`queue "ns-after" is Suspended`)(p)
			})
		if err != nil {
			t.Fatal(err)
		}
		if util.IsBound(getPod(t, ns, name[0])) {
			before = append(before, name...)
		} else {
			after = append(after, name...)
		}
	}
	if pod := getPod(t, ns, first[0]); !util.IsBound(pod) {
		t.Fatalf("pod %s of the old queue lost its node", first[0])
	}
	// The PodGroup created before the change stays in the old queue when it changes; one created
	// after goes to the new, Suspended queue and waits there (Pending).
	if _, err := groups.Patch(context.Background(), "early", types.MergePatchType, []byte(`{"metadata":{"labels":{"touched":"yes"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := groups.Create(context.Background(), util.MakePodGroup(ns, "late").Obj(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitQueueCounts(t, "ns-after", func(s schedulingv1beta1.QueueStatus) bool { return s.Pending == 1 && s.Inqueue == 0 })
	waitQueueCounts(t, "ns-before", func(s schedulingv1beta1.QueueStatus) bool { return s.Inqueue == 1 && s.Pending == 0 })
	setQueueState(t, "ns-after", schedulingv1beta1.QueueStateOpen)
	waitBound(t, ns, after)
	waitQueueAllocated(t, "ns-before", int64(1+len(before)))
	waitQueueAllocated(t, "ns-after", 1)
}

// waitQueueCounts waits until the queue's status satisfies ok.
func waitQueueCounts(t *testing.T, queue string, ok func(schedulingv1beta1.QueueStatus) bool) {
	t.Helper()
	var last schedulingv1beta1.QueueStatus
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		q, err := cluster.Queues.SchedulingV1beta1().Queues().Get(ctx, queue, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = q.Status
		return ok(last), nil
	})
	if err != nil {
		t.Fatalf("queue %s: status never as wanted; last pending %d, inqueue %d", queue, last.Pending, last.Inqueue)
	}
}

// waitQueueAllocated waits until the queue's status shows cpus CPUs allocated.
func waitQueueAllocated(t *testing.T, queue string, cpus int64) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		q, err := cluster.Queues.SchedulingV1beta1().Queues().Get(ctx, queue, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = q.Status.Allocated.Cpu().String()
		return q.Status.Allocated.Cpu().Value() == cpus, nil
	})
	if err != nil {
		t.Fatalf("queue %s: allocated cpu %s, want %d", queue, last, cpus)
	}
}

// Held pods that no new node can help carry a reason of their own, which cluster autoscalers do not
// act on; a pod that a bigger node would help keeps Unschedulable.
func TestHeldPodsCarryReasonsAutoscalersIgnore(t *testing.T) {
	ns := newNamespace(t, "", nil)
	createQueue(t, util.MakeQueue("why-suspended").State(schedulingv1beta1.QueueStateSuspended).Obj())
	createQueue(t, util.MakeQueue("why-open").Obj())
	createQueue(t, util.MakeQueue("why-capped").Capability(map[v1.ResourceName]string{v1.ResourceCPU: "3"}).Obj())
	capped := func(name string) *v1.Pod {
		return util.MakePod(ns, name).Label(schedulingv1beta1.QueueLabel, "why-capped").Req(map[v1.ResourceName]string{v1.ResourceCPU: "2"}).Obj()
	}
	waitBound(t, ns, createPods(t, ns, "holder", 1, capped))
	if _, err := cluster.Queues.SchedulingV1beta1().PodGroups(ns).Create(context.Background(),
		util.MakePodGroup(ns, "three").Queue("why-open").MinMember(3).Obj(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	member := func(group string) func(string) *v1.Pod {
		return func(name string) *v1.Pod {
			return util.MakePod(ns, name).Label(schedulingv1beta1.PodGroupLabel, group).Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()
		}
	}
	huge := func(name string) *v1.Pod {
		return util.MakePod(ns, name).Label(schedulingv1beta1.QueueLabel, "why-open").Req(map[v1.ResourceName]string{v1.ResourceCPU: "1000"}).Obj()
	}
	for _, tt := range []struct {
		pods   []string
		reason string
	}{
		{createPods(t, ns, "suspended", 1, queuePod(ns, "why-suspended")), holdreport.QueueSuspended},
		{createPods(t, ns, "lonely", 1, member("three")), holdreport.GangIncomplete},
		{createPods(t, ns, "early", 1, member("later")), holdreport.PodGroupMissing},
		{createPods(t, ns, "capped", 1, capped), holdreport.QueueCapability},
		{createPods(t, ns, "huge", 1, huge), v1.PodReasonUnschedulable},
	} {
		err := util.WaitForPods(context.Background(), cluster.Kube, ns, tt.pods, settle, "held with reason "+tt.reason, func(pod *v1.Pod) bool {
			c := util.PodScheduledCondition(pod)
			return pod.Spec.NodeName == "" && c != nil && c.Status == v1.ConditionFalse && c.Reason == tt.reason
		})
		if err != nil {
			t.Error(err)
		}
	}
}

// On an idle cluster the first pods of a new queue wait only for the shares to include their demand,
// a moment: they bind without ever reading PodScheduled=False, which a FailedScheduling warning
// comes with. The watch starts before the pods exist, so it sees every status they pass through.
func TestFirstPodsOfANewQueueBindWithoutAWarning(t *testing.T) {
	createQueue(t, util.MakeQueue("first-pods").Obj())
	ns := newNamespace(t, "", nil)
	ctx, cancel := context.WithTimeout(context.Background(), settle)
	defer cancel()
	w, err := cluster.Kube.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	pods := createPods(t, ns, "first", 3, queuePod(ns, "first-pods"))
	bound := map[string]bool{}
	for len(bound) < len(pods) {
		select {
		case <-ctx.Done():
			t.Fatalf("pods bound: %v of %v", bound, pods)
		case ev := <-w.ResultChan():
			pod, ok := ev.Object.(*v1.Pod)
			if !ok {
				t.Fatalf("watch event %v: %#v", ev.Type, ev.Object)
			}
			if c := util.PodScheduledCondition(pod); c != nil && c.Status == v1.ConditionFalse {
				t.Errorf("pod %s read PodScheduled=False (%s): %s", pod.Name, c.Reason, c.Message)
			}
			if pod.Spec.NodeName != "" {
				bound[pod.Name] = true
			}
		}
	}
}

// `kubectl get q` shows a queue's pods, PodGroups and units, zeros included: a queue running only bare
// pods reads its running pods, and 0, not a blank, for the rest. The API server's table is what
// kubectl prints; columns of priority 1 are those of -o wide.
func TestQueueTableShowsPodsAndZeros(t *testing.T) {
	createQueue(t, util.MakeQueue("table-bare").Obj())
	ns := newNamespace(t, "", nil)
	waitBound(t, ns, createPods(t, ns, "bare", 3, queuePod(ns, "table-bare")))
	waitQueue(t, "table-bare", "counting its 3 pods", func(q *schedulingv1beta1.Queue) bool { return q.Status.RunningPods == 3 })
	raw, err := cluster.Kube.CoreV1().RESTClient().Get().AbsPath("/apis/scheduling.queue-scheduler.io/v1beta1/queues/table-bare").
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").Do(context.Background()).Raw()
	if err != nil {
		t.Fatal(err)
	}
	table := &metav1.Table{}
	if err := json.Unmarshal(raw, table); err != nil {
		t.Fatal(err)
	}
	if len(table.Rows) != 1 {
		t.Fatalf("table rows: %d, want 1", len(table.Rows))
	}
	got := map[string]string{}
	for i, c := range table.ColumnDefinitions {
		got[fmt.Sprintf("%s/%d", c.Name, c.Priority)] = fmt.Sprint(table.Rows[0].Cells[i])
	}
	want := map[string]string{
		"State/0": "Open", "Running Pods/0": "3", "Pending Pods/0": "0", "Pending/0": "0", "Running/0": "0",
		"Inqueue/1": "0", "Enqueued/1": "0", "Dequeued/1": "0",
	}
	for column, value := range want {
		if got[column] != value {
			t.Errorf("column %s (name/priority) = %q, want %q; table %v", column, got[column], value, got)
		}
	}
}
