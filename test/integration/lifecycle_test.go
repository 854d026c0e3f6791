package integration

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"

	busv1alpha1 "github.com/queue-scheduler/queue-scheduler/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// waitQueue polls until the queue satisfies ok, failing with its last spec and status.
func waitQueue(t *testing.T, name, what string, ok func(*schedulingv1beta1.Queue) bool) *schedulingv1beta1.Queue {
	t.Helper()
	var last *schedulingv1beta1.Queue
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		q, err := cluster.Queues.SchedulingV1beta1().Queues().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = q
		return ok(q), nil
	})
	if err != nil {
		t.Fatalf("queue %s not %s within %s: last spec.state %q status %+v", name, what, settle, last.Spec.State, last.Status)
	}
	return last
}

func waitStatusState(t *testing.T, name string, state schedulingv1beta1.QueueState) {
	t.Helper()
	waitQueue(t, name, "status.state "+string(state), func(q *schedulingv1beta1.Queue) bool { return q.Status.State == state })
}

func waitStatusStates(t *testing.T, state schedulingv1beta1.QueueState, names ...string) {
	t.Helper()
	for _, name := range names {
		waitStatusState(t, name, state)
	}
}

func waitSpecState(t *testing.T, name string, state schedulingv1beta1.QueueState) {
	t.Helper()
	waitQueue(t, name, "spec.state "+string(state), func(q *schedulingv1beta1.Queue) bool { return q.Spec.State == state })
}

// finishPods marks pods Succeeded, as a kubelet would when their containers exit.
func finishPods(t *testing.T, namespace string, names []string) {
	t.Helper()
	setPodPhase(t, namespace, names, v1.PodSucceeded)
}

// setPodPhase writes the pods' phase, as a kubelet would.
func setPodPhase(t *testing.T, namespace string, names []string, phase v1.PodPhase) {
	t.Helper()
	for _, name := range names {
		pod := getPod(t, namespace, name)
		pod.Status.Phase = phase
		if _, err := cluster.Kube.CoreV1().Pods(namespace).UpdateStatus(context.Background(), pod, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("set pod %s %s: %v", name, phase, err)
		}
	}
}

// A Closed queue with live work reads Closing, and Closed once the last pod finishes; its status
// counts what it holds.
func TestClosedQueueIsClosingUntilItsWorkFinishes(t *testing.T) {
	const queue = "closes-later"
	createQueue(t, util.MakeQueue(queue).Obj())
	created := getQueue(t, queue).ManagedFields
	ns := newNamespace(t, "", nil)
	pods := createPods(t, ns, "work", 2, queuePod(ns, queue))
	waitBound(t, ns, pods)
	q := waitQueue(t, queue, "showing 2 CPUs allocated", func(q *schedulingv1beta1.Queue) bool {
		return q.Status.State == schedulingv1beta1.QueueStateOpen && q.Status.Allocated.Cpu().Value() == 2
	})
	if q.Status.ObservedGeneration != q.Generation {
		t.Errorf("observedGeneration %d, generation %d", q.Status.ObservedGeneration, q.Generation)
	}
	wantManagersKept(t, q, created)

	setQueueState(t, queue, schedulingv1beta1.QueueStateClosed)
	waitStatusState(t, queue, schedulingv1beta1.QueueStateClosing)
	finishPods(t, ns, pods[:1])
	waitQueue(t, queue, "closing with 1 CPU", func(q *schedulingv1beta1.Queue) bool {
		return q.Status.State == schedulingv1beta1.QueueStateClosing && q.Status.Allocated.Cpu().Value() == 1
	})
	finishPods(t, ns, pods[1:])
	waitStatusState(t, queue, schedulingv1beta1.QueueStateClosed)
}

// wantManagersKept checks that the controller's status writes, made from a cache that holds no
// managed fields, left the server's managed fields of the queue's creator in place and added the
// status writer's.
func wantManagersKept(t *testing.T, q *schedulingv1beta1.Queue, created []metav1.ManagedFieldsEntry) {
	t.Helper()
	managers, status := map[string]bool{}, false
	for _, m := range q.ManagedFields {
		managers[m.Manager+"/"+m.Subresource] = true
		status = status || m.Subresource == "status"
	}
	for _, m := range created {
		if !managers[m.Manager+"/"+m.Subresource] {
			t.Errorf("queue %s: managed fields of %s lost after the status writes; now %v", q.Name, m.Manager, managers)
		}
	}
	if !status {
		t.Errorf("queue %s: no managed fields of the status writer; now %v", q.Name, managers)
	}
}

// A queue whose parent is missing is Unknown, and holds its pods with that reason.
func TestQueueWithMissingParentIsUnknown(t *testing.T) {
	ns := newNamespace(t, "", nil)
	var pods []string
	withoutAdmission(t, func() {
		createQueue(t, util.MakeQueue("orphan").Parent("no-such-parent").Obj())
		pods = createPods(t, ns, "orphaned", 1, queuePod(ns, "orphan"))
	})
	waitStatusState(t, "orphan", schedulingv1beta1.QueueStateUnknown)
	waitHeld(t, ns, pods, `queue "orphan" is Unknown: its parent queue "no-such-parent" does not exist`)

	createQueue(t, util.MakeQueue("no-such-parent").Obj())
	waitStatusState(t, "orphan", schedulingv1beta1.QueueStateOpen)
	waitBound(t, ns, pods)
}

// The controller keeps the root of the hierarchy and the default queue in place.
func TestRootAndDefaultQueuesExist(t *testing.T) {
	for _, name := range []string{schedulingv1beta1.RootQueue, schedulingv1beta1.DefaultQueue} {
		waitStatusState(t, name, schedulingv1beta1.QueueStateOpen)
	}
}

// sendCommand creates a Command and waits until the controller has applied and deleted it.
func sendCommand(t *testing.T, namespace string, action busv1alpha1.Action, queue string) {
	t.Helper()
	cmd := &busv1alpha1.Command{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "cmd-", Namespace: namespace},
		Spec: busv1alpha1.CommandSpec{Action: action, Target: busv1alpha1.Target{Name: queue},
			Reason: "Test", Message: t.Name()},
	}
	created, err := cluster.Queues.BusV1alpha1().Commands(namespace).Create(context.Background(), cmd, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create command: %v", err)
	}
	err = wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		_, err := cluster.Queues.BusV1alpha1().Commands(namespace).Get(ctx, created.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("command %s %s was not consumed within %s", action, queue, settle)
	}
}

// queueInState creates a queue and brings it to a state of the table: Open, Suspended, Closed,
// Closing (Closed with a live pod) or Unknown (a missing parent).
func queueInState(t *testing.T, name, namespace string, state schedulingv1beta1.QueueState) {
	t.Helper()
	w := util.MakeQueue(name)
	switch state {
	case schedulingv1beta1.QueueStateUnknown:
		withoutAdmission(t, func() { createQueue(t, w.Parent("missing-"+name).Obj()) })
		waitStatusState(t, name, state)
		return
	case schedulingv1beta1.QueueStateClosing:
		createQueue(t, w.Obj())
		waitBound(t, namespace, createPods(t, namespace, name, 1, queuePod(namespace, name)))
		setQueueState(t, name, schedulingv1beta1.QueueStateClosed)
		waitStatusState(t, name, schedulingv1beta1.QueueStateClosing)
		return
	default:
		w.State(state)
	}
	createQueue(t, w.Obj())
	waitStatusState(t, name, state)
}

// Every Command from every state gives the table's result, once, with an Event on the queue, and the
// Command is gone.
func TestCommandsFromEveryState(t *testing.T) {
	states := []schedulingv1beta1.QueueState{"Open", "Closing", "Closed", "Suspended", "Unknown"}
	// want[action][from] is the spec.state after the Command; "" means ignored (unchanged).
	want := map[busv1alpha1.Action]map[schedulingv1beta1.QueueState]schedulingv1beta1.QueueState{
		busv1alpha1.OpenQueue:    {"Open": "Open", "Closing": "Open", "Closed": "Open", "Suspended": "Open", "Unknown": "Open"},
		busv1alpha1.CloseQueue:   {"Open": "Closed", "Closing": "Closed", "Closed": "Closed", "Suspended": "Closed", "Unknown": "Closed"},
		busv1alpha1.SuspendQueue: {"Open": "Suspended", "Closing": "Suspended", "Closed": "", "Suspended": "Suspended", "Unknown": "Suspended"},
		busv1alpha1.ResumeQueue:  {"Open": "", "Closing": "", "Closed": "", "Suspended": "Open", "Unknown": ""},
	}
	ns := newNamespace(t, "", nil)
	for action, byState := range want {
		for _, from := range states {
			t.Run(fmt.Sprintf("%s from %s", action, from), func(t *testing.T) {
				name := fmt.Sprintf("%s-from-%s", lower(string(action)), lower(string(from)))
				queueInState(t, name, ns, from)
				before := getQueue(t, name)
				sendCommand(t, ns, action, name)
				after := getQueue(t, name)
				wantSpec := byState[from]
				if wantSpec != "" {
					wantEventOnce(t, name, appliedReason[action])
				}
				if wantSpec == "" {
					wantSpec = before.Spec.State
					if err := util.WaitForEvent(context.Background(), cluster.Kube, "default", name, "CommandIgnored", string(action)+" ignored", settle); err != nil {
						t.Error(err)
					}
				}
				if after.Spec.State != wantSpec {
					t.Errorf("spec.state after %s from %s: got %s, want %s", action, from, after.Spec.State, wantSpec)
				}
			})
		}
	}
}

// appliedReason is the Event reason of each applied Command.
var appliedReason = map[busv1alpha1.Action]string{
	busv1alpha1.OpenQueue: "QueueOpened", busv1alpha1.CloseQueue: "QueueClosed",
	busv1alpha1.SuspendQueue: "QueueSuspended", busv1alpha1.ResumeQueue: "QueueResumed",
}

// wantEventOnce checks that the queue got exactly one event with reason: the Command was applied once.
func wantEventOnce(t *testing.T, queue, reason string) {
	t.Helper()
	if err := util.WaitForEvent(context.Background(), cluster.Kube, "default", queue, reason, "", settle); err != nil {
		t.Fatal(err)
	}
	selector := fields.Set{"involvedObject.name": queue, "reason": reason}.AsSelector().String()
	events, err := cluster.Kube.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{FieldSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	total := int32(0)
	for _, e := range events.Items {
		total += max(e.Count, 1)
	}
	if total != 1 {
		t.Errorf("queue %s: %d %s events, want exactly 1", queue, total, reason)
	}
}

func getQueue(t *testing.T, name string) *schedulingv1beta1.Queue {
	t.Helper()
	q, err := cluster.Queues.SchedulingV1beta1().Queues().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get queue %s: %v", name, err)
	}
	return q
}

func lower(s string) string {
	out := []byte(s)
	for i, c := range out {
		if c >= 'A' && c <= 'Z' {
			out[i] = c + 'a' - 'A'
		}
	}
	return string(out)
}

// Close, suspend, open and resume cascade down a three-level tree; opening restores only what the
// cascade changed.
func TestCascadeOverThreeLevels(t *testing.T) {
	createQueue(t, util.MakeQueue("org").Obj())
	createQueue(t, util.MakeQueue("dept").Parent("org").Obj())
	createQueue(t, util.MakeQueue("team-x").Parent("dept").Obj())
	createQueue(t, util.MakeQueue("team-y").Parent("dept").State(schedulingv1beta1.QueueStateSuspended).Obj())
	waitStatusState(t, "team-y", schedulingv1beta1.QueueStateSuspended)

	setQueueState(t, "org", schedulingv1beta1.QueueStateClosed)
	waitStatusStates(t, schedulingv1beta1.QueueStateClosed, "dept", "team-x", "team-y")
	setQueueState(t, "org", schedulingv1beta1.QueueStateOpen)
	waitStatusStates(t, schedulingv1beta1.QueueStateOpen, "dept", "team-x")
	waitStatusState(t, "team-y", schedulingv1beta1.QueueStateSuspended)

	setQueueState(t, "org", schedulingv1beta1.QueueStateSuspended)
	waitStatusStates(t, schedulingv1beta1.QueueStateSuspended, "dept", "team-x", "team-y")
	setQueueState(t, "org", schedulingv1beta1.QueueStateOpen)
	waitStatusStates(t, schedulingv1beta1.QueueStateOpen, "dept", "team-x")
	// team-y was suspended by its owner, not by the cascade: it stays suspended.
	waitSpecState(t, "team-y", schedulingv1beta1.QueueStateSuspended)
	if err := util.WaitForEvent(context.Background(), cluster.Kube, "default", "team-x", "StateCascaded", `parent queue "dept"`, settle); err != nil {
		t.Error(err)
	}
}

// Deleting a queue deletes the finished PodGroups and QueueUnits that still name it.
func TestDeletedQueueTakesItsFinishedWork(t *testing.T) {
	const queue = "short-lived"
	createQueue(t, util.MakeQueue(queue).Obj())
	ns := newNamespace(t, "", nil)
	api := cluster.Queues.SchedulingV1beta1().PodGroups(ns)
	if _, err := api.Create(context.Background(), util.MakePodGroup(ns, "done").Queue(queue).Obj(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	members := createPods(t, ns, "member", 1, func(name string) *v1.Pod {
		return util.MakePod(ns, name).Label(schedulingv1beta1.PodGroupLabel, "done").Obj()
	})
	units := cluster.Queues.SchedulingV1beta1().QueueUnits(ns)
	if _, err := units.Create(context.Background(), queueUnit(ns, "done-unit", queue), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The controller writes the new unit's status beside this update: take the latest on a conflict.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		unit, err := units.Get(context.Background(), "done-unit", metav1.GetOptions{})
		if err != nil {
			return err
		}
		unit.Status.Phase = schedulingv1beta1.QueueUnitDequeued
		_, err = units.UpdateStatus(context.Background(), unit, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	waitBound(t, ns, members)
	setPodPhase(t, ns, members, v1.PodRunning)
	waitPodGroupPhase(t, ns, "done", schedulingv1beta1.PodGroupRunning)
	finishPods(t, ns, members)
	waitPodGroupPhase(t, ns, "done", schedulingv1beta1.PodGroupCompleted)

	setQueueState(t, queue, schedulingv1beta1.QueueStateClosed)
	waitStatusState(t, queue, schedulingv1beta1.QueueStateClosed)
	if err := cluster.Queues.SchedulingV1beta1().Queues().Delete(context.Background(), queue, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		_, pgErr := api.Get(ctx, "done", metav1.GetOptions{})
		_, unitErr := units.Get(ctx, "done-unit", metav1.GetOptions{})
		return apierrors.IsNotFound(pgErr) && apierrors.IsNotFound(unitErr), nil
	})
	if err != nil {
		t.Fatalf("the PodGroup or the QueueUnit of the deleted queue still exists after %s", settle)
	}
}

func waitPodGroupPhase(t *testing.T, namespace, name string, phase schedulingv1beta1.PodGroupPhase) {
	t.Helper()
	var last schedulingv1beta1.PodGroupStatus
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		pg, err := cluster.Queues.SchedulingV1beta1().PodGroups(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = pg.Status
		return pg.Status.Phase == phase, nil
	})
	if err != nil {
		t.Fatalf("PodGroup %s/%s not %s within %s: status %+v", namespace, name, phase, settle, last)
	}
}

// Queue status shows each queue's fair share: three queues of weights 1:2:3 that all want more than
// the cluster has deserve 1:2:3 of what the others leave.
func TestDeservedSharesFollowWeights(t *testing.T) {
	ns := newNamespace(t, "", nil)
	for i, name := range []string{"share-1", "share-2", "share-3"} {
		createQueue(t, util.MakeQueue(name).Weight(int32(i+1)).Obj())
		// Pods no node can take: they stay pending and their requests are the queue's demand.
		createPods(t, ns, name, 3, func(pod string) *v1.Pod {
			return util.MakePod(ns, pod).Label(schedulingv1beta1.QueueLabel, name).
				NodeSelector(map[string]string{"pool": "none"}).
				Req(map[v1.ResourceName]string{v1.ResourceCPU: "100"}).Obj()
		})
	}
	var shares [3]float64
	waitQueue(t, "share-3", "deserving three times share-1", func(*schedulingv1beta1.Queue) bool {
		for i, name := range []string{"share-1", "share-2", "share-3"} {
			shares[i] = float64(getQueue(t, name).Status.Deserved.Cpu().MilliValue())
		}
		return shares[0] > 0 && within(shares[1]/shares[0], 2, 0.01) && within(shares[2]/shares[0], 3, 0.01)
	})
}

func within(got, want, tolerance float64) bool {
	return got >= want*(1-tolerance) && got <= want*(1+tolerance)
}
