package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/utils/ptr"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// interval is one scheduling interval: the time from room freeing up to a waiting pod bound there.
const interval = 5 * time.Second

// eta predicts a waiting pod's start from the runtime bound of the pod in its way, and the pod then
// starts by that time, within a scheduling interval: the test stands in for the kubelet, which ends
// the running pod at its bound.
func TestETA(t *testing.T) {
	removeQueues(t, "eta")
	mustRun(t, "create", "eta", "--all-namespaces")
	ctx := context.Background()
	pods := cluster.Kube.CoreV1().Pods("default")
	holder := util.MakePod("default", "eta-holder").Label(schedulingv1beta1.QueueLabel, "eta").Req(map[v1.ResourceName]string{v1.ResourceCPU: "16"}).Obj()
	holder.Spec.ActiveDeadlineSeconds, holder.Spec.TerminationGracePeriodSeconds = ptr.To[int64](40), ptr.To[int64](0)
	waiting := util.MakePod("default", "eta-waiting").Label(schedulingv1beta1.QueueLabel, "eta").Req(map[v1.ResourceName]string{v1.ResourceCPU: "4"}).Obj()
	t.Cleanup(func() {
		for _, name := range []string{holder.Name, waiting.Name} {
			_ = pods.Delete(ctx, name, *metav1.NewDeleteOptions(0))
		}
	})
	if _, err := pods.Create(ctx, holder, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := util.WaitForPods(ctx, cluster.Kube, "default", []string{holder.Name}, settle, "bound", util.IsBound); err != nil {
		t.Fatal(err)
	}
	// Started on the forecast's 10 s grid, the holder's bound ends on it: start + 40 s, at least 30 s
	// from now, well after the next forecast (one every 10 s).
	started := time.Now().Truncate(10 * time.Second)
	setPhase(t, holder.Name, v1.PodRunning, started)
	if _, err := pods.Create(ctx, waiting, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	end := started.Add(40 * time.Second)
	waitExpectedStart(t, waiting.Name, "the holder's end", func(p50 time.Time) bool { return p50.Equal(end) })
	out := mustRun(t, "eta", waiting.Name, "--namespace", "default")
	if !strings.Contains(out, "pod/eta-waiting") || !strings.Contains(out, "eta") || strings.Contains(out, "not within a week") {
		t.Errorf("kubectl queue eta:\n%s", out)
	}
	if out := mustRun(t, "eta", "--queue", "eta"); !strings.Contains(out, "pod/eta-waiting") {
		t.Errorf("kubectl queue eta --queue eta:\n%s", out)
	}
	// The kubelet ends the holder once its bound has passed; the waiting pod is then bound.
	err := wait.PollUntilContextTimeout(ctx, util.PollInterval, time.Until(end)+settle, true, func(context.Context) (bool, error) {
		return !time.Now().Before(end), nil
	})
	if err != nil {
		t.Fatalf("the holder's bound %v never passed", end)
	}
	if err := pods.Delete(ctx, holder.Name, *metav1.NewDeleteOptions(0)); err != nil {
		t.Fatal(err)
	}
	if err := util.WaitForPods(ctx, cluster.Kube, "default", []string{waiting.Name}, settle, "bound", util.IsBound); err != nil {
		t.Fatal(err)
	}
	// When the scheduler bound it, as the API server recorded it (to the second), not when this
	// test saw it.
	bound, err := pods.Get(ctx, waiting.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := util.PodScheduledCondition(bound)
	if c == nil || c.Status != v1.ConditionTrue {
		t.Fatalf("bound pod %s has no PodScheduled=True condition: %+v", waiting.Name, c)
	}
	if at := c.LastTransitionTime.Time; at.After(end.Add(interval)) {
		t.Errorf("the waiting pod started at %v, %s after its expected start %v: more than a scheduling interval", at, at.Sub(end), end)
	}
}

// Runtimes are learned from the queue's pods that finish, as the scheduler's informer of live pods
// sees them go: three pods that ran five minutes teach the queue's runtime, and a waiting pod is then
// expected to start five minutes after the start of the pod in its way, not after the default hour.
func TestETALearnsRuntimesFromFinishedPods(t *testing.T) {
	removeQueues(t, "learn")
	mustRun(t, "create", "learn", "--all-namespaces")
	ctx := context.Background()
	pods := cluster.Kube.CoreV1().Pods("default")
	var names []string
	for i := range 3 {
		pod := util.MakePod("default", fmt.Sprintf("learn-done-%d", i)).Label(schedulingv1beta1.QueueLabel, "learn").
			Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()
		if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		names = append(names, pod.Name)
	}
	t.Cleanup(func() { deleteAll(pods, names...) })
	if err := util.WaitForPods(ctx, cluster.Kube, "default", names, settle, "bound", util.IsBound); err != nil {
		t.Fatal(err)
	}
	// Each ran five minutes, and ends now, as a kubelet reports it.
	for _, name := range names {
		setPhase(t, name, v1.PodRunning, time.Now().Add(-5*time.Minute))
		setPhase(t, name, v1.PodSucceeded, time.Time{})
	}
	holder := util.MakePod("default", "learn-holder").Label(schedulingv1beta1.QueueLabel, "learn").Req(map[v1.ResourceName]string{v1.ResourceCPU: "16"}).Obj()
	waiting := util.MakePod("default", "learn-waiting").Label(schedulingv1beta1.QueueLabel, "learn").Req(map[v1.ResourceName]string{v1.ResourceCPU: "4"}).Obj()
	names = append(names, holder.Name, waiting.Name)
	if _, err := pods.Create(ctx, holder, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := util.WaitForPods(ctx, cluster.Kube, "default", []string{holder.Name}, settle, "bound", util.IsBound); err != nil {
		t.Fatal(err)
	}
	started := time.Now().Truncate(time.Second)
	setPhase(t, holder.Name, v1.PodRunning, started)
	if _, err := pods.Create(ctx, waiting, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Five minutes, to within a bucket of the learned runtimes (a quarter) and the forecast's step.
	earliest, latest := started.Add(5*time.Minute*3/4), started.Add(5*time.Minute*5/4+10*time.Second)
	waitExpectedStart(t, waiting.Name, "five minutes after the holder's start", func(p50 time.Time) bool {
		return !p50.Before(earliest) && !p50.After(latest)
	})
}

// waitExpectedStart waits until the live view expects the pending pod of the default namespace to
// start at a time ok says, the forecast's what.
func waitExpectedStart(t *testing.T, name, what string, ok func(p50 time.Time) bool) {
	t.Helper()
	var last *visibilityv1beta1.ExpectedStart
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		list, err := cluster.Queues.VisibilityV1beta1().PendingWorkloads("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		for _, w := range list.Items {
			if w.Workload.Name == name && w.ExpectedStart != nil && w.ExpectedStart.P50 != nil {
				last = w.ExpectedStart
			}
		}
		return last != nil && ok(last.P50.Time), nil
	})
	if err != nil {
		t.Fatalf("pod %s was never expected to start at %s; last forecast %+v", name, what, last)
	}
}

// setPhase writes a pod's phase, and its start time when one is given, as a kubelet does.
func setPhase(t *testing.T, name string, phase v1.PodPhase, started time.Time) {
	t.Helper()
	pods := cluster.Kube.CoreV1().Pods("default")
	pod, err := pods.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Status.Phase = phase
	if !started.IsZero() {
		pod.Status.StartTime = ptr.To(metav1.NewTime(started))
	}
	if _, err := pods.UpdateStatus(context.Background(), pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// deleteAll deletes the pods at once, whatever is left of them.
func deleteAll(pods typedcorev1.PodInterface, names ...string) {
	for _, name := range names {
		_ = pods.Delete(context.Background(), name, *metav1.NewDeleteOptions(0))
	}
}
