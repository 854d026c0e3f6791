package fairshare

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// wantLiveView waits until the live view of each queue shows the CPUs the API server has bound to
// it and its pods not bound yet, then checks, in the same read, that its share is what it holds over
// what it deserves and that its pending work is those pods, numbered in order.
func wantLiveView(t *testing.T, allocated map[string]int64) {
	t.Helper()
	for queue, cpus := range allocated {
		var last string
		err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
			s, err := cluster.Queues.VisibilityV1beta1().QueueSummaries().Get(ctx, queue, metav1.GetOptions{})
			if err != nil {
				last = err.Error()
				return false, nil
			}
			pending, err := cluster.Queues.VisibilityV1beta1().QueueSummaries().GetPendingWorkloads(ctx, queue, metav1.GetOptions{})
			if err != nil {
				last = err.Error()
				return false, nil
			}
			unbound := unboundPods(t, queue)
			last = fmt.Sprintf("%s: %d CPUs, %d pending pods, %d pending workloads, share %s of %s deserved",
				queue, s.Allocated.Cpu().Value(), s.PendingPods, len(pending.Items), s.Share, s.Deserved.Cpu())
			if s.Allocated.Cpu().Value() != cpus || int(s.PendingPods) != unbound || len(pending.Items) != unbound {
				return false, nil
			}
			if want := fmt.Sprintf("%.3f", float64(cpus*1000)/float64(s.Deserved.Cpu().MilliValue())); s.Share != want {
				t.Errorf("queue %s: share %s, want %s (%d CPUs of %s deserved)", queue, s.Share, want, cpus, s.Deserved.Cpu())
			}
			for i, w := range pending.Items {
				if w.PositionInQueue != int32(i+1) || w.Queue != queue || w.Workload.Kind != visibilityv1beta1.WorkloadPod || w.Reason == "" {
					t.Errorf("queue %s: pending workload %d: %+v", queue, i, w)
				}
			}
			return true, nil
		})
		if err != nil {
			t.Errorf("the live view never showed queue %s holding %d CPUs with its pods not bound: last %s", queue, cpus, last)
		}
	}
}

// unboundPods counts the live pods of the queue that are not bound.
func unboundPods(t *testing.T, queue string) int {
	t.Helper()
	list, err := cluster.Kube.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{
		LabelSelector: schedulingv1beta1.QueueLabel + "=" + queue})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range list.Items {
		if p.Spec.NodeName == "" && p.DeletionTimestamp == nil {
			n++
		}
	}
	return n
}
