package integration

import (
	"context"
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
	"github.com/queue-scheduler/queue-scheduler/pkg/controller"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// A waiting PodGroup and a waiting QueueUnit say when they are expected to start, in an
// ExpectedStart condition: when the pod holding their queue's capability ends by its runtime bound.
// The PodGroup's condition goes once it is scheduled.
func TestWaitingWorkSaysWhenItIsExpectedToStart(t *testing.T) {
	ns := newNamespace(t, "", nil)
	const queue = "expected-start"
	createQueue(t, util.MakeQueue(queue).Capability(map[v1.ResourceName]string{v1.ResourceCPU: "2"}).Obj())
	ctx := context.Background()
	pods := cluster.Kube.CoreV1().Pods(ns)
	holder := util.MakePod(ns, "holder").Label(schedulingv1beta1.QueueLabel, queue).Req(map[v1.ResourceName]string{v1.ResourceCPU: "2"}).Obj()
	holder.Spec.ActiveDeadlineSeconds, holder.Spec.TerminationGracePeriodSeconds = ptr.To[int64](3600), ptr.To[int64](0)
	if _, err := pods.Create(ctx, holder, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitBound(t, ns, []string{holder.Name})
	started := time.Now().Truncate(time.Second)
	running, err := pods.Get(ctx, holder.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	running.Status.Phase, running.Status.StartTime = v1.PodRunning, ptr.To(metav1.NewTime(started))
	if _, err := pods.UpdateStatus(ctx, running, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The holder's bound ends an hour after its start, and the room it frees is taken at that end.
	// The work comes once the forecast reads that start: a condition is written again only when
	// its start moves by a minute or more.
	end := started.Add(time.Hour)
	waitHolderEnd(t, queue, end)
	if _, err := cluster.Queues.SchedulingV1beta1().PodGroups(ns).Create(ctx, util.MakePodGroup(ns, "gang").MinMember(1).Queue(queue).Obj(),
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	member := util.MakePod(ns, "gang-0").Label(schedulingv1beta1.PodGroupLabel, "gang").Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()
	if _, err := pods.Create(ctx, member, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createJob(t, ns, "unit-job", 1, true)
	createUnit(t, util.MakeQueueUnit(ns, "unit", queue, "unit-job").Resource(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj())

	wantExpected := func(conditions []metav1.Condition) bool {
		c := meta.FindStatusCondition(conditions, schedulingv1beta1.PodGroupExpectedStart)
		return c != nil && c.Status == metav1.ConditionTrue && c.Reason == controller.ReasonForecast &&
			strings.Contains(c.Message, "expected to start at "+end.UTC().Format(time.RFC3339))
	}
	waitPodGroup(t, ns, "gang", "expected to start at the holder's end", func(pg *schedulingv1beta1.PodGroup) bool {
		return wantExpected(pg.Status.Conditions)
	})
	waitUnit(t, ns, "unit", "expected to start at the holder's end", func(u *schedulingv1beta1.QueueUnit) bool {
		return u.Status.Phase == schedulingv1beta1.QueueUnitEnqueued && wantExpected(u.Status.Conditions)
	})

	wantSnapshot(t, ns, queue, end, end)

	if err := pods.Delete(ctx, holder.Name, *metav1.NewDeleteOptions(0)); err != nil {
		t.Fatal(err)
	}
	waitPodGroup(t, ns, "gang", "scheduled, its forecast gone", func(pg *schedulingv1beta1.PodGroup) bool {
		return meta.IsStatusConditionTrue(pg.Status.Conditions, schedulingv1beta1.PodGroupScheduled) &&
			meta.FindStatusCondition(pg.Status.Conditions, schedulingv1beta1.PodGroupExpectedStart) == nil
	})
}

// wantSnapshot checks the forecast's snapshot: the holder of queue runs until holderEnd, and the
// namespace's gang and unit are expected at start.
func wantSnapshot(t *testing.T, namespace, queue string, holderEnd, start time.Time) {
	t.Helper()
	snap, err := cluster.Queues.VisibilityV1beta1().ForecastSnapshots().Get(context.Background(), visibilityv1beta1.CurrentSnapshot, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if holders := runningUntil(snap, queue, holderEnd); holders != 1 {
		t.Errorf("the snapshot runs %d pods of %s until %v, want the holder", holders, queue, holderEnd)
	}
	waiting := map[visibilityv1beta1.WorkloadKind]bool{}
	for _, w := range snap.Pending {
		if w.Namespace != namespace {
			continue
		}
		p50 := w.Start.P50
		waiting[w.Workload.Kind] = w.Queue == queue && p50 != nil && p50.Time.Equal(start)
	}
	if !waiting[visibilityv1beta1.WorkloadPodGroup] || !waiting[visibilityv1beta1.WorkloadQueueUnit] {
		t.Errorf("the snapshot's pending work of %s: %+v, want the gang and the unit of %s expected at %v", namespace, snap.Pending, queue, start)
	}
}

// runningUntil counts the pods of queue the snapshot runs until end.
func runningUntil(snap *visibilityv1beta1.ForecastSnapshot, queue string, end time.Time) int {
	n := 0
	for _, node := range snap.Nodes {
		for _, r := range node.Running {
			if r.Queue == queue && r.EndP50 != nil && r.EndP50.Time.Equal(end) {
				n++
			}
		}
	}
	return n
}

// waitHolderEnd waits until the forecast's snapshot runs one pod of queue until end.
func waitHolderEnd(t *testing.T, queue string, end time.Time) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		snap, err := cluster.Queues.VisibilityV1beta1().ForecastSnapshots().Get(ctx, visibilityv1beta1.CurrentSnapshot, metav1.GetOptions{})
		return err == nil && runningUntil(snap, queue, end) == 1, nil
	})
	if err != nil {
		t.Fatalf("the forecast never ran a pod of %s until %v", queue, end)
	}
}

// waitPodGroup waits until the PodGroup satisfies ok.
func waitPodGroup(t *testing.T, namespace, name, what string, ok func(*schedulingv1beta1.PodGroup) bool) {
	t.Helper()
	var last *schedulingv1beta1.PodGroup
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		pg, err := cluster.Queues.SchedulingV1beta1().PodGroups(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = pg
		return ok(pg), nil
	})
	if err != nil {
		t.Fatalf("PodGroup %s/%s not %s within %s; last status: %+v", namespace, name, what, settle, last)
	}
}
