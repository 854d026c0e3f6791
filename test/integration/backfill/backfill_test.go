package backfill

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/controller"
	"github.com/queue-scheduler/queue-scheduler/plugins/backfill"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// fillerDeadline is the runtime bound of the pods that fill the cluster; grace, the termination
// grace period every pod here has (the API server's default), which the bound counts too.
const (
	fillerDeadline = 600
	grace          = 30 * time.Second
)

// fill fills every node with 1-CPU pods bound to end fillerDeadline seconds after they start, and
// starts them; it returns their names and when they started.
func fill(t *testing.T, prefix, queue string) ([]string, time.Time) {
	t.Helper()
	fillers := names(many(job{name: prefix, queue: queue, cpu: "1", deadline: fillerDeadline}, nodes*8))
	submit(t, many(job{name: prefix, queue: queue, cpu: "1", deadline: fillerDeadline}, nodes*8)...)
	waitBound(t, "fillers", fillers...)
	at := time.Now().Truncate(time.Second) // a pod's start time is kept to the second
	start(t, at, fillers...)
	return fillers, at
}

// reservedFrom waits for the gang's reservation to start when the fillers are gone: their start plus
// their bound and grace, rounded up to the resolution.
func reservedFrom(t *testing.T, group string, started time.Time) *visibilityv1beta1.Reservation {
	t.Helper()
	want := started.Add(fillerDeadline*time.Second + grace)
	return reservation(t, group, func(r *visibilityv1beta1.Reservation) bool {
		start := r.Start.Time
		return !start.Before(want) && !start.After(want.Add(resolution)) && len(r.Nodes) == 2
	})
}

// outside is a node the reservation does not name.
func outside(r *visibilityv1beta1.Reservation) string {
	for i := range nodes {
		if name := "node-" + string(rune('0'+i)); !slices.Contains(r.Nodes, name) {
			return name
		}
	}
	return ""
}

// waitBoundCount waits until at least n of the named pods are bound.
func waitBoundCount(t *testing.T, n int, names ...string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(context.Context) (bool, error) {
		bound := 0
		for _, p := range pods(t) {
			if slices.Contains(names, p.Name) && p.Spec.NodeName != "" {
				bound++
			}
		}
		return bound >= n, nil
	})
	if err != nil {
		t.Fatalf("fewer than %d of %v were ever bound", n, names)
	}
}

// waitRefusedForTheReservation waits until n of the named pods are pending, refused for the
// reservation.
func waitRefusedForTheReservation(t *testing.T, n int, names ...string) {
	t.Helper()
	refused := 0
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(context.Context) (bool, error) {
		refused = 0
		for _, p := range pods(t) {
			if slices.Contains(names, p.Name) && refusedForTheReservation(p) {
				refused++
			}
		}
		return refused == n, nil
	})
	if err != nil {
		t.Fatalf("%d of %v wait for the reservation, want %d", refused, names, n)
	}
}

// refusedForTheReservation says whether a pending pod's PodScheduled condition names the
// reservation.
func refusedForTheReservation(pod *v1.Pod) bool {
	c := util.PodScheduledCondition(pod)
	return pod.Spec.NodeName == "" && c != nil && c.Status == v1.ConditionFalse && strings.Contains(c.Message, backfill.ReasonReserved)
}

// TestOnlyPodsThatEndBeforeTheStartBackfill fills the cluster with pods bound to end in 10 minutes,
// and submits a gang of half the cluster: it gets a reservation from when they end, on two nodes.
// With 3 CPUs freed on a reserved node and 3 on another, pods without a bound and pods that end
// after the start take only the other node's; pods that end before the start take the reserved
// node's. Once the reserved nodes' pods end, the gang starts.
func TestOnlyPodsThatEndBeforeTheStartBackfill(t *testing.T) {
	withQueues(t, "fill", "team", "late")
	fillers, started := fill(t, "fill", "fill")
	gang(t, "big", "team", many(job{name: "big", queue: "team", cpu: "8"}, 2))
	r := reservedFrom(t, "big", started)
	// The condition is written apart from the plan the view shows: it names the node once it is.
	reservedCondition(t, "big", metav1.ConditionTrue, controller.ReasonStartPlanned, r.Nodes[0])
	reserved, free := r.Nodes[0], outside(r)
	all := pods(t)
	end(t, append(onNode(all, reserved, fillers...)[:3], onNode(all, free, fillers...)[:3]...)...)

	late := append(many(job{name: "unbounded", queue: "late", cpu: "1"}, 3), many(job{name: "long", queue: "late", cpu: "1", deadline: 2 * fillerDeadline}, 3)...)
	submit(t, late...)
	waitBoundCount(t, 3, names(late)...)
	// The other three are turned away by the reservation before any pod that may backfill comes: once
	// those fill the reserved node, a pod tried again there finds no room, whatever the reservation.
	waitRefusedForTheReservation(t, 3, names(late)...)
	short := many(job{name: "short", queue: "late", cpu: "1", deadline: fillerDeadline / 10}, 3)
	submit(t, short...)
	all = waitBound(t, "pods that end before the start", names(short)...)
	if on := onNode(all, reserved, names(short)...); len(on) != 3 {
		t.Errorf("pods that end before the start on the reserved node %s: %v, want all 3", reserved, on)
	}
	if on := onNode(all, reserved, names(late)...); len(on) > 0 {
		t.Errorf("pods without a bound or ending after the start bound on the reserved node %s: %v", reserved, on)
	}
	waiting := 0
	for _, name := range names(late) {
		if all[name].Spec.NodeName == "" {
			waiting++
		}
	}
	if waiting != 3 {
		t.Errorf("%d of the late pods wait, want 3", waiting)
	}
	if err := util.WaitForMetric(context.Background(), "queue_scheduler_backfilled_pods_total", map[string]string{"queue": "late"}, settle,
		"backfilled pods", func(v float64) bool { return v >= 3 }); err != nil {
		t.Error(err)
	}

	// The reserved nodes' pods end: the gang starts there, and its reservation is over.
	all = pods(t)
	var ending []string
	for _, node := range r.Nodes {
		ending = append(ending, onNode(all, node, append(fillers, names(short)...)...)...)
	}
	end(t, ending...)
	waitBound(t, "the gang", "big-0", "big-1")
	reservedCondition(t, "big", metav1.ConditionFalse, controller.ReasonStarted, "")
}

// TestReservationSurvivesARestart restarts the scheduler while a gang holds a reservation: the new
// one plans the same start and nodes from the cluster's state, and keeps pods without a bound off
// the reserved room.
func TestReservationSurvivesARestart(t *testing.T) {
	withQueues(t, "refill", "restart", "after")
	fillers, started := fill(t, "refill", "refill")
	gang(t, "kept", "restart", many(job{name: "kept", queue: "restart", cpu: "8"}, 2))
	before := reservedFrom(t, "kept", started)

	if err := cluster.RestartScheduler(context.Background()); err != nil {
		t.Fatalf("restart the scheduler: %v", err)
	}
	after := reservation(t, "kept", func(r *visibilityv1beta1.Reservation) bool { return true })
	if d := after.Start.Sub(before.Start.Time).Abs(); d > resolution || !slices.Equal(after.Nodes, before.Nodes) {
		t.Fatalf("after the restart the reservation is %v on %v, want %v on %v (within %s)", after.Start, after.Nodes, before.Start, before.Nodes, resolution)
	}
	reserved := after.Nodes[0]
	end(t, onNode(pods(t), reserved, fillers...)[:2]...)
	submit(t, job{name: "unbounded-after", queue: "after", cpu: "1"}, job{name: "short-after", queue: "after", cpu: "1", deadline: 60})
	all := waitBound(t, "a pod that ends before the start", "short-after")
	if err := util.WaitForPods(context.Background(), cluster.Kube, ns, []string{"unbounded-after"}, settle, "refused for the reservation", refusedForTheReservation); err != nil {
		t.Fatal(err)
	}
	if all["short-after"].Spec.NodeName != reserved {
		t.Errorf("short-after bound on %s, want the reserved node %s", all["short-after"].Spec.NodeName, reserved)
	}
}

// TestSuspendedQueueHoldsNoReservation suspends the queue of a gang that holds a reservation: the
// reservation is let go, and a pod without a bound may take the room it held.
func TestSuspendedQueueHoldsNoReservation(t *testing.T) {
	withQueues(t, "still", "paused", "busy")
	fillers, started := fill(t, "still", "still")
	gang(t, "stopped", "paused", many(job{name: "stopped", queue: "paused", cpu: "8"}, 2))
	r := reservedFrom(t, "stopped", started)
	reservedCondition(t, "stopped", metav1.ConditionTrue, controller.ReasonStartPlanned, "")

	if _, err := cluster.Queues.SchedulingV1beta1().Queues().Patch(context.Background(), "paused", types.MergePatchType,
		[]byte(`{"spec":{"state":"Suspended"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	reservedCondition(t, "stopped", metav1.ConditionFalse, controller.ReasonReleased, "")
	end(t, onNode(pods(t), r.Nodes[0], fillers...)[:1]...)
	submit(t, job{name: "unbounded-busy", queue: "busy", cpu: "1"})
	if all := waitBound(t, "a pod without a bound once the reservation is let go", "unbounded-busy"); all["unbounded-busy"].Spec.NodeName != r.Nodes[0] {
		t.Errorf("unbounded-busy bound on %s, want %s", all["unbounded-busy"].Spec.NodeName, r.Nodes[0])
	}
}

// TestReservationLapsesWhenItsGangCannotStart holds a node free for a gang whose two members take
// the same host port: the plan, which does not model ports, puts both there, and the gang can never
// start. Once the room has been free for lapseAfter, the reservation lapses, the condition says so,
// and a pod without a bound takes the room.
func TestReservationLapsesWhenItsGangCannotStart(t *testing.T) {
	withQueues(t, "busy-fill", "ported", "other")
	fillers, _ := fill(t, "busy-fill", "busy-fill")
	free := "node-0"
	end(t, onNode(pods(t), free, fillers...)...)
	gang(t, "clash", "ported", many(job{name: "clash", queue: "ported", cpu: "4", hostPort: 8080}, 2))
	r := reservation(t, "clash", func(r *visibilityv1beta1.Reservation) bool { return true })
	if len(r.Nodes) != 1 || r.Nodes[0] != free {
		t.Fatalf("reservation on %v, want the free node %s", r.Nodes, free)
	}
	submit(t, job{name: "unbounded-other", queue: "other", cpu: "1"})
	if err := util.WaitForPods(context.Background(), cluster.Kube, ns, []string{"unbounded-other"}, settle, "refused for the reservation", refusedForTheReservation); err != nil {
		t.Fatal(err)
	}
	c := reservedCondition(t, "clash", metav1.ConditionFalse, controller.ReasonLapsed, "")
	if !strings.Contains(c.Message, "planned again from") {
		t.Errorf("Lapsed condition %q does not say when the gang is planned again", c.Message)
	}
	if all := waitBound(t, "a pod without a bound once the reservation lapsed", "unbounded-other"); all["unbounded-other"].Spec.NodeName != free {
		t.Errorf("unbounded-other bound on %s, want %s", all["unbounded-other"].Spec.NodeName, free)
	}
}
