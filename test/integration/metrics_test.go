package integration

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	busv1alpha1 "github.com/queue-scheduler/queue-scheduler/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/holdreport"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// metricNow is the current value of a sample, 0 when there is none yet (a counter not yet counted).
func metricNow(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := util.ScrapeMetrics(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	v, _ := util.MetricValue(families, name, labels)
	return v
}

func waitMetric(t *testing.T, name string, labels map[string]string, what string, ok func(float64) bool) {
	t.Helper()
	if err := util.WaitForMetric(context.Background(), name, labels, settle, what, ok); err != nil {
		t.Error(err)
	}
}

func equals(want float64) func(float64) bool { return func(v float64) bool { return v == want } }

// After a known scenario, /metrics reports it: a queue's allocation, deserved share, share,
// capability, weight, state and pods; its PodGroups by phase, zeros included; the wait of its bound
// pods; the report of a pod held at its capability; a refused admission; an applied Command.
func TestMetricsReportTheQueues(t *testing.T) {
	const queue = "metrics-team"
	cpu := func(n string) map[v1.ResourceName]string { return map[v1.ResourceName]string{v1.ResourceCPU: n} }
	createQueue(t, util.MakeQueue(queue).Weight(2).Capability(cpu("4")).Obj())
	ns := newNamespace(t, "", nil)
	of := func(extra ...string) map[string]string {
		labels := map[string]string{"queue": queue}
		for i := 0; i+1 < len(extra); i += 2 {
			labels[extra[i]] = extra[i+1]
		}
		return labels
	}
	heldBefore := metricNow(t, "queue_scheduler_held_pod_reports_total", map[string]string{"reason": holdreport.QueueCapability})
	refusedBefore := metricNow(t, "queue_scheduler_admission_refusals_total", map[string]string{"kind": "PodGroup"})
	suspendsBefore := metricNow(t, "queue_scheduler_commands_total", map[string]string{"action": string(busv1alpha1.SuspendQueue), "result": "Applied"})

	waitBound(t, ns, createPods(t, ns, "bound", 3, queuePod(ns, queue)))
	waitMetric(t, "queue_scheduler_queue_allocated", of("resource", "cpu"), "3 CPUs", equals(3))
	waitMetric(t, "queue_scheduler_queue_running_pods", of(), "3 pods", equals(3))
	waitMetric(t, "queue_scheduler_pod_wait_seconds", of(), "3 waits observed", equals(3))
	waitMetric(t, "queue_scheduler_queue_deserved", of("resource", "cpu"), "a share", func(v float64) bool { return v >= 3 })
	waitMetric(t, "queue_scheduler_queue_share", of("resource", "cpu"), "a share in (0, 1]", func(v float64) bool { return v > 0 && v <= 1 })
	waitMetric(t, "queue_scheduler_queue_capability", of("resource", "cpu"), "4", equals(4))
	waitMetric(t, "queue_scheduler_queue_weight", of(), "2", equals(2))
	waitMetric(t, "queue_scheduler_queue_state", of("state", "Open"), "Open", equals(1))
	waitMetric(t, "queue_scheduler_queue_podgroups", of("phase", "Running"), "0", equals(0))

	createPods(t, ns, "over", 1, func(name string) *v1.Pod {
		return util.MakePod(ns, name).Label(schedulingv1beta1.QueueLabel, queue).Req(cpu("2")).Obj()
	})
	waitMetric(t, "queue_scheduler_queue_pending_pods", of(), "1 pending pod", equals(1))
	waitMetric(t, "queue_scheduler_queue_pending_requests", of("resource", "cpu"), "2 CPUs pending", equals(2))
	waitMetric(t, "queue_scheduler_held_pod_reports_total", map[string]string{"reason": holdreport.QueueCapability},
		"counting the report of the pod held at the capability", equals(heldBefore+1))

	_, err := cluster.Queues.SchedulingV1beta1().PodGroups(ns).Create(context.Background(),
		util.MakePodGroup(ns, "too-big").Queue(queue).MinResources(cpu("8")).Obj(), metav1.CreateOptions{})
	if err == nil {
		t.Fatal("a PodGroup above its queue's capability was admitted")
	}
	waitMetric(t, "queue_scheduler_admission_refusals_total", map[string]string{"kind": "PodGroup"},
		"counting the refusal", equals(refusedBefore+1))

	sendCommand(t, ns, busv1alpha1.SuspendQueue, queue)
	waitMetric(t, "queue_scheduler_commands_total", map[string]string{"action": string(busv1alpha1.SuspendQueue), "result": "Applied"},
		"counting the Command", equals(suspendsBefore+1))
	waitMetric(t, "queue_scheduler_queue_state", of("state", "Suspended"), "Suspended", equals(1))
	waitMetric(t, "queue_scheduler_queue_state", of("state", "Open"), "no longer Open", equals(0))
}
