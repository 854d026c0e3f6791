package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/controller"
	"github.com/queue-scheduler/queue-scheduler/pkg/holdreport"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// createJob creates a suspended or running batch/v1 Job of pods one-CPU pods.
func createJob(t *testing.T, namespace, name string, pods int32, suspend bool) *batchv1.Job {
	t.Helper()
	j, err := cluster.Kube.BatchV1().Jobs(namespace).Create(context.Background(), util.MakeJob(namespace, name, pods, suspend), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create Job %s: %v", name, err)
	}
	return j
}

// createUnit creates a QueueUnit and returns it as stored.
func createUnit(t *testing.T, u *schedulingv1beta1.QueueUnit) *schedulingv1beta1.QueueUnit {
	t.Helper()
	out, err := cluster.Queues.SchedulingV1beta1().QueueUnits(u.Namespace).Create(context.Background(), u, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create QueueUnit %s: %v", u.Name, err)
	}
	return out
}

// waitUnit waits until the unit satisfies ok, and returns it.
func waitUnit(t *testing.T, namespace, name, what string, ok func(*schedulingv1beta1.QueueUnit) bool) *schedulingv1beta1.QueueUnit {
	t.Helper()
	var last *schedulingv1beta1.QueueUnit
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		u, err := cluster.Queues.SchedulingV1beta1().QueueUnits(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = u
		return ok(u), nil
	})
	if err != nil {
		t.Fatalf("QueueUnit %s/%s not %s within %s; last status: %+v", namespace, name, what, settle, last)
	}
	return last
}

func isDequeued(u *schedulingv1beta1.QueueUnit) bool { return u.Dequeued() }

func enqueuedWith(text string) func(*schedulingv1beta1.QueueUnit) bool {
	return func(u *schedulingv1beta1.QueueUnit) bool {
		return u.Status.Phase == schedulingv1beta1.QueueUnitEnqueued && strings.Contains(u.Status.Message, text)
	}
}

// jobPods lists the pods the Job controller made for a Job.
func jobPods(t *testing.T, namespace, jobName string) []string {
	t.Helper()
	list, err := cluster.Kube.CoreV1().Pods(namespace).List(context.Background(), metav1.ListOptions{LabelSelector: batchv1.JobNameLabel + "=" + jobName})
	if err != nil {
		t.Fatalf("list pods of Job %s: %v", jobName, err)
	}
	names := make([]string, 0, len(list.Items))
	for _, p := range list.Items {
		names = append(names, p.Name)
	}
	return names
}

// waitJobPods waits until the Job has count pods and returns their names.
func waitJobPods(t *testing.T, namespace, jobName string, count int) []string {
	t.Helper()
	var names []string
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(context.Context) (bool, error) {
		names = jobPods(t, namespace, jobName)
		return len(names) == count, nil
	})
	if err != nil {
		t.Fatalf("Job %s has %d pods, want %d", jobName, len(names), count)
	}
	return names
}

// Three units in a queue that fits two: while the queue is Suspended all stay Enqueued; the lowest
// one's priority is raised; on resume the two highest by the new order dequeue and the third stays
// Enqueued saying why, with a ScheduleFailed event; the queue counts enqueued and dequeued units.
func TestQueueUnitsDequeueByPriority(t *testing.T) {
	ns := newNamespace(t, "", nil)
	queue := "units-by-priority"
	createQueue(t, util.MakeQueue(queue).State(schedulingv1beta1.QueueStateSuspended).Capability(map[v1.ResourceName]string{v1.ResourceCPU: "4"}).Obj())
	for i, name := range []string{"low", "mid", "high"} {
		createJob(t, ns, name, 2, true)
		createUnit(t, util.MakeQueueUnit(ns, name, queue, name).Priority(int32(i+1)).Resource(map[v1.ResourceName]string{v1.ResourceCPU: "2"}).Obj())
	}
	for _, name := range []string{"low", "mid", "high"} {
		waitUnit(t, ns, name, "Enqueued by the suspended queue", enqueuedWith("is Suspended"))
	}

	patch := []byte(`{"spec":{"priority":10}}`)
	if _, err := cluster.Queues.SchedulingV1beta1().QueueUnits(ns).Patch(context.Background(), "low", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("raise the priority of an Enqueued unit: %v", err)
	}
	// The dequeue pass orders the units as the scheduler's caches hold them, from which the live view
	// lists them too: the queue opens once they hold the new priority.
	waitFirstPending(t, queue, visibilityv1beta1.WorkloadReference{Kind: visibilityv1beta1.WorkloadQueueUnit, Name: "low"})
	setQueueState(t, queue, schedulingv1beta1.QueueStateOpen)

	waitUnit(t, ns, "low", "Dequeued", isDequeued)
	waitUnit(t, ns, "high", "Dequeued", isDequeued)
	mid := waitUnit(t, ns, "mid", "Enqueued for lack of room", enqueuedWith(`queue "units-by-priority" would exceed its capability of cpu`))
	if err := util.WaitForEvent(context.Background(), cluster.Kube, ns, mid.Name, controller.ReasonScheduleFailed, "would exceed its capability", settle); err != nil {
		t.Fatal(err)
	}
	if err := util.WaitForEvent(context.Background(), cluster.Kube, ns, "high", controller.ReasonScheduleSucceeded, "dequeued", settle); err != nil {
		t.Fatal(err)
	}
	waitQueue(t, queue, "counting 1 enqueued and 2 dequeued units", func(q *schedulingv1beta1.Queue) bool {
		return q.Status.Enqueued == 1 && q.Status.Dequeued == 2
	})
	for _, name := range []string{"low", "high"} {
		if j, err := cluster.Kube.BatchV1().Jobs(ns).Get(context.Background(), name, metav1.GetOptions{}); err != nil || *j.Spec.Suspend {
			t.Errorf("Job %s of a Dequeued unit should be un-suspended (err %v)", name, err)
		}
	}
	if j, err := cluster.Kube.BatchV1().Jobs(ns).Get(context.Background(), "mid", metav1.GetOptions{}); err != nil || !*j.Spec.Suspend {
		t.Errorf("Job mid of an Enqueued unit should stay suspended (err %v)", err)
	}

	// Closing waits for the Jobs of the Dequeued units, which have no pods yet and have not finished
	// (no Job controller runs in this test).
	if err := cluster.Queues.SchedulingV1beta1().QueueUnits(ns).Delete(context.Background(), "mid", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	setQueueState(t, queue, schedulingv1beta1.QueueStateClosed)
	waitQueue(t, queue, "Closing for its 2 unfinished units", func(q *schedulingv1beta1.Queue) bool {
		active := meta.FindStatusCondition(q.Status.Conditions, controller.QueueActive)
		return q.Status.State == schedulingv1beta1.QueueStateClosing && active != nil &&
			strings.Contains(active.Message, "2 unfinished QueueUnits") && q.Status.Enqueued == 0
	})
}

// A Job created suspended runs once its unit dequeues, through the upstream Job controller; the pods
// of a second Job, created running while its unit waits for room, are held and never bind until the
// first Job finishes and the second unit dequeues.
func TestQueueUnitHoldsAndReleasesJobPods(t *testing.T) {
	util.RunJobController(t, cluster.Kube)
	ns := newNamespace(t, "", nil)
	queue := "units-jobs"
	createQueue(t, util.MakeQueue(queue).Capability(map[v1.ResourceName]string{v1.ResourceCPU: "2"}).Obj())
	two := map[v1.ResourceName]string{v1.ResourceCPU: "2"}

	first := createJob(t, ns, "first", 2, true)
	createUnit(t, util.MakeQueueUnit(ns, "first", queue, first.Name).Resource(two).Obj())
	waitUnit(t, ns, "first", "Dequeued", isDequeued)
	firstPods := waitJobPods(t, ns, "first", 2)
	waitBound(t, ns, firstPods)

	createUnit(t, util.MakeQueueUnit(ns, "second", queue, "second").Resource(two).Obj())
	waitUnit(t, ns, "second", "Enqueued for lack of room", enqueuedWith("would exceed its capability"))
	createJob(t, ns, "second", 2, false)
	secondPods := waitJobPods(t, ns, "second", 2)
	waitHeld(t, ns, secondPods, "QueueUnit "+ns+"/second is Enqueued")
	for _, name := range secondPods {
		if c := util.PodScheduledCondition(getPod(t, ns, name)); c.Reason != holdreport.UnitEnqueued {
			t.Errorf("pod %s held by its unit: reason %q, want %s", name, c.Reason, holdreport.UnitEnqueued)
		}
	}

	for _, name := range firstPods {
		finishPod(t, ns, name)
	}
	waitUnit(t, ns, "second", "Dequeued once the first Job finished", isDequeued)
	waitBound(t, ns, secondPods)
	for _, name := range secondPods {
		if got := getPod(t, ns, name).Labels[schedulingv1beta1.QueueLabel]; got != queue {
			t.Errorf("pod %s has queue label %q; admission should write its unit's queue %q", name, got, queue)
		}
	}

	// Closing waits for the Dequeued unit's Job to finish.
	setQueueState(t, queue, schedulingv1beta1.QueueStateClosed)
	waitStatusState(t, queue, schedulingv1beta1.QueueStateClosing)
	for _, name := range secondPods {
		finishPod(t, ns, name)
	}
	waitStatusState(t, queue, schedulingv1beta1.QueueStateClosed)
}

// finishPod marks a pod Succeeded, as its kubelet would.
func finishPod(t *testing.T, namespace, name string) {
	t.Helper()
	pod := getPod(t, namespace, name)
	pod.Status.Phase = v1.PodSucceeded
	if _, err := cluster.Kube.CoreV1().Pods(namespace).UpdateStatus(context.Background(), pod, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("finish pod %s: %v", name, err)
	}
}

// Updates: while Enqueued only the priority may change, and a rejection names the field; once
// Dequeued nothing may, and the rejection says the update came after the dequeue.
func TestQueueUnitUpdates(t *testing.T) {
	ns := newNamespace(t, "", nil)
	queue := "units-updates"
	createQueue(t, util.MakeQueue(queue).State(schedulingv1beta1.QueueStateSuspended).Obj())
	createJob(t, ns, "job", 1, true)
	createUnit(t, util.MakeQueueUnit(ns, "unit", queue, "job").Priority(1).Resource(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj())
	waitUnit(t, ns, "unit", "Enqueued", enqueuedWith("is Suspended"))

	units := cluster.Queues.SchedulingV1beta1().QueueUnits(ns)
	patch := func(body string) error {
		_, err := units.Patch(context.Background(), "unit", types.MergePatchType, []byte(body), metav1.PatchOptions{})
		return err
	}
	for _, tc := range []struct{ body, field string }{
		{`{"spec":{"resource":{"cpu":"8"}}}`, "spec.resource"},
		{`{"spec":{"consumerRef":{"name":"other"}}}`, "spec.consumerRef"},
	} {
		err := patch(tc.body)
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("update %s while Enqueued: got %v, want a rejection naming %s", tc.body, err, tc.field)
		}
	}
	if err := patch(`{"spec":{"priority":7,"priorityClassName":"whatever"}}`); err != nil {
		t.Fatalf("change the priority while Enqueued: %v", err)
	}

	setQueueState(t, queue, schedulingv1beta1.QueueStateOpen)
	waitUnit(t, ns, "unit", "Dequeued", isDequeued)
	err := patch(`{"spec":{"priority":9}}`)
	if err == nil || !strings.Contains(err.Error(), "already Dequeued") || !strings.Contains(err.Error(), "spec") {
		t.Errorf("update after dequeue: got %v, want a rejection saying the unit was already Dequeued", err)
	}
	if u := waitUnit(t, ns, "unit", "Dequeued", isDequeued); *u.Spec.Priority != 7 {
		t.Errorf("priority = %d after a rejected update, want 7", *u.Spec.Priority)
	}
}

// A unit is refused at creation in a Closed queue and in a Closing one.
func TestQueueUnitRejectedByClosedQueues(t *testing.T) {
	ns := newNamespace(t, "", nil)
	createQueue(t, util.MakeQueue("units-closed").State(schedulingv1beta1.QueueStateClosed).Obj())
	closing := "units-closing"
	createQueue(t, util.MakeQueue(closing).Obj())
	running := createPods(t, ns, "running", 1, queuePod(ns, closing))
	waitBound(t, ns, running)
	setQueueState(t, closing, schedulingv1beta1.QueueStateClosed)
	waitStatusState(t, closing, schedulingv1beta1.QueueStateClosing)

	for queue, state := range map[string]string{"units-closed": "Closed", closing: "Closing"} {
		u := util.MakeQueueUnit(ns, "unit-"+queue, queue, "job").Resource(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()
		_, err := cluster.Queues.SchedulingV1beta1().QueueUnits(ns).Create(context.Background(), u, metav1.CreateOptions{})
		want := fmt.Sprintf("queue %q is %s", queue, state)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "spec.queue") {
			t.Errorf("create a unit in %s queue: got %v, want a rejection of spec.queue saying %s", state, err, want)
		}
	}
}

// A unit becomes a dependent of its consumer (for the garbage collector), and when the consumer is
// deleted the controller deletes the unit too (this control plane runs no garbage collector).
func TestQueueUnitOfDeletedConsumerIsCleanedUp(t *testing.T) {
	ns := newNamespace(t, "", nil)
	queue := "units-cleanup"
	createQueue(t, util.MakeQueue(queue).Obj())
	j := createJob(t, ns, "job", 1, true)
	u := util.MakeQueueUnit(ns, "unit", queue, j.Name).Resource(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()
	u.Spec.ConsumerRef.UID = j.UID
	createUnit(t, u)
	waitUnit(t, ns, "unit", "Dequeued and owned by its Job", func(u *schedulingv1beta1.QueueUnit) bool {
		return u.Dequeued() && len(u.OwnerReferences) == 1 && u.OwnerReferences[0].UID == j.UID && u.OwnerReferences[0].Kind == "Job"
	})

	if err := cluster.Kube.BatchV1().Jobs(ns).Delete(context.Background(), j.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete Job: %v", err)
	}
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		_, err := cluster.Queues.SchedulingV1beta1().QueueUnits(ns).Get(ctx, "unit", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("QueueUnit of a deleted Job still exists after %s", settle)
	}
}

// A unit whose consumer's kind the API server does not serve waits, saying so, and is tried again
// after a while rather than failing its sync over and over.
func TestQueueUnitOfAKindNotServedWaits(t *testing.T) {
	queue := "qu-unserved"
	createQueue(t, util.MakeQueue(queue).Obj())
	ns := newNamespace(t, "", nil)
	u := util.MakeQueueUnit(ns, "tf", queue, "tf").Obj()
	u.Spec.ConsumerRef.APIVersion, u.Spec.ConsumerRef.Kind = "kubeflow.org/v1", "TFJob"
	createUnit(t, u)
	waitUnit(t, ns, "tf", "waiting for its kind", enqueuedWith("waiting: kind TFJob of kubeflow.org/v1 is not served by the API server (is its CRD installed?)"))
	if err := util.WaitForEvent(context.Background(), cluster.Kube, ns, "tf", "ScheduleFailed", "is not served", settle); err != nil {
		t.Fatal(err)
	}
}

// waitFirstPending waits until the live view lists work first in the queue's pending work.
func waitFirstPending(t *testing.T, queue string, work visibilityv1beta1.WorkloadReference) {
	t.Helper()
	waitPendingList(t, waitViewServed(t), queue, fmt.Sprintf("%v first", work), func(pending []visibilityv1beta1.PendingWorkload) bool {
		return len(pending) > 0 && pending[0].Workload == work
	})
}
