package fairshare

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// steadyWindow is how long the cluster must stay still after reclaim converged.
const steadyWindow = 30 * time.Second

// withPriorityClasses makes sure the classes low (1) and high (100) exist and that the API server's
// priority admission knows them: a pod created right after its class can otherwise be refused.
func withPriorityClasses(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	api := cluster.Kube.SchedulingV1().PriorityClasses()
	for name, value := range map[string]int32{"low": 1, "high": 100} {
		pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}
		if _, err := api.Create(ctx, pc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		probe := util.MakePod(ns, "priority-probe").SchedulerName(v1.DefaultSchedulerName).Obj()
		probe.Spec.PriorityClassName = name
		err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, wait.ForeverTestTimeout, true, func(ctx context.Context) (bool, error) {
			_, err := cluster.Kube.CoreV1().Pods(ns).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			return err == nil, nil
		})
		if err != nil {
			t.Fatalf("priority class %s never admitted", name)
		}
	}
}

// submitWith creates count 1-CPU pods named <queue>-<class>-<i> in queue with the priority class.
func submitWith(t *testing.T, queue, class string, count int) {
	t.Helper()
	for i := range count {
		pod := util.MakePod(ns, fmt.Sprintf("%s-%s-%d", queue, class, i)).Label(schedulingv1beta1.QueueLabel, queue).
			Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()
		pod.Spec.PriorityClassName = class
		createPod(t, pod)
	}
}

// evictions watches the namespace's pods and collects the name of every bound pod deleted.
type evictions struct {
	w       watch.Interface
	deleted chan string
	// markers hears of the marker pods drain creates, in the watch's order.
	markers chan string
	drains  int
}

// markerPrefix names the pods drain creates to learn that the watch has caught up; no scheduler
// takes them.
const markerPrefix = "watch-marker-"

func watchEvictions(t *testing.T) *evictions {
	t.Helper()
	w, err := cluster.Kube.CoreV1().Pods(ns).Watch(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e := &evictions{w: w, deleted: make(chan string, 1000), markers: make(chan string, 10)}
	go func() {
		for ev := range w.ResultChan() {
			pod, ok := ev.Object.(*v1.Pod)
			switch {
			case !ok:
			case ev.Type == watch.Added && strings.HasPrefix(pod.Name, markerPrefix):
				e.markers <- pod.Name
			case ev.Type == watch.Deleted && pod.Spec.NodeName != "":
				e.deleted <- pod.Name
			}
		}
		close(e.deleted)
	}()
	t.Cleanup(w.Stop)
	return e
}

// drain returns the names deleted so far, once the watch has caught up with the API server: it
// creates a marker pod and waits for the watch to deliver it, so that every deletion stored before
// is counted, however late its event.
func (e *evictions) drain(t *testing.T) []string {
	t.Helper()
	e.drains++
	marker := util.MakePod(ns, fmt.Sprintf("%s%d", markerPrefix, e.drains)).SchedulerName("no-scheduler").Obj()
	createPod(t, marker)
	defer func() {
		_ = cluster.Kube.CoreV1().Pods(ns).Delete(context.Background(), marker.Name, *metav1.NewDeleteOptions(0))
	}()
	timer := time.NewTimer(wait.ForeverTestTimeout)
	defer timer.Stop()
	for {
		select {
		case name := <-e.markers:
			if name != marker.Name {
				continue
			}
			var out []string
			for {
				select {
				case name := <-e.deleted:
					out = append(out, name)
				default:
					return out
				}
			}
		case <-timer.C:
			t.Fatalf("the pod watch did not deliver its marker %s within %s", marker.Name, wait.ForeverTestTimeout)
		}
	}
}

// wantOnlyVictims checks that every victim's name starts with prefix (what names those pods).
func wantOnlyVictims(t *testing.T, victims []string, prefix, what string) {
	t.Helper()
	for _, name := range victims {
		if !strings.HasPrefix(name, prefix) {
			t.Errorf("evicted %s; only %s should go", name, what)
		}
	}
}

// wantSteady checks that nothing is evicted for steadyWindow of steady demand after convergence.
func wantSteady(t *testing.T, evicted *evictions) {
	t.Helper()
	timer := time.NewTimer(steadyWindow)
	defer timer.Stop()
	select {
	case name := <-evicted.deleted:
		t.Fatalf("pod %s evicted after reclaim converged; allocation %v", name, boundCPU(t))
	case <-timer.C:
	}
}

// One queue borrows the idle cluster; a second submits: reclaim brings it to its deserved share,
// victims come only from the borrower, lowest priority first, none from a queue that is not
// reclaimable; after convergence nothing more is evicted for 30 s of steady demand, and the live view
// shows each queue as the API server holds it.
func TestReclaimTakesBackFromTheBorrower(t *testing.T) {
	withPriorityClasses(t)
	withQueues(t, util.MakeQueue("borrower").Obj(), util.MakeQueue("keeper").Reclaimable(false).Obj(), util.MakeQueue("owner").Obj())
	submitWith(t, "borrower", "low", 15)
	submitWith(t, "borrower", "high", 20)
	submitWith(t, "keeper", "low", 25)
	waitAllocation(t, "full with the borrower and the keeper", func(a map[string]int64) bool {
		return a["borrower"] == 35 && a["keeper"] == 25
	})
	evicted := watchEvictions(t)
	reclaimed := reclaimCount(t, "owner", "borrower")
	// Each queue deserves 20: the borrower gives back its 15 above; the keeper's 5 above stay.
	submitWith(t, "owner", "low", 30)
	waitAllocation(t, "20/25/15", func(a map[string]int64) bool {
		return a["borrower"] == 20 && a["keeper"] == 25 && a["owner"] == 15
	})
	victims := evicted.drain(t)
	if len(victims) != 15 {
		t.Errorf("%d pods evicted, want 15: %v", len(victims), victims)
	}
	wantOnlyVictims(t, victims, "borrower-low-", "the borrower's low-priority pods")
	if got := reclaimCount(t, "owner", "borrower") - reclaimed; got != 15 {
		t.Errorf("/metrics counts %v evictions from the borrower for the owner, want 15", got)
	}
	wantSteady(t, evicted)
	if a := boundCPU(t); a["borrower"] != 20 || a["keeper"] != 25 || a["owner"] != 15 {
		t.Fatalf("allocation moved during the steady window: %v", a)
	}
	wantLiveView(t, map[string]int64{"borrower": 20, "keeper": 25, "owner": 15})
}

// Reclaim never leaves a victim gang below minMember: members above it and single pods go first.
func TestReclaimKeepsVictimGangsWhole(t *testing.T) {
	withQueues(t, util.MakeQueue("borrower").Obj(), util.MakeQueue("owner").Obj())
	createPodGroup(t, util.MakePodGroup(ns, "elastic").MinMember(6).Queue("borrower").Obj())
	for i := range 8 {
		createPod(t, util.MakePod(ns, fmt.Sprintf("elastic-%d", i)).Label(schedulingv1beta1.PodGroupLabel, "elastic").
			Req(map[v1.ResourceName]string{v1.ResourceCPU: "5"}).Obj())
	}
	waitAllocationOf(t, "elastic gang running", func(b map[string]int) bool { return b["elastic"] == 8 })
	submit(t, "borrower", 20, "1")
	waitAllocation(t, "the borrower holding the cluster", func(a map[string]int64) bool { return a["borrower"] == 60 })
	// The owner deserves 30: the 20 single pods and 2 of the gang's 8 members make room.
	submit(t, "owner", 30, "1")
	waitAllocation(t, "owner at its share", func(a map[string]int64) bool { return a["owner"] == 30 })
	if got := boundMembers(t)["elastic"]; got != 6 {
		t.Fatalf("the gang has %d members bound, want its minMember 6", got)
	}
}

// Within one queue, ordinary priority preemption: a high-priority pod of a queue at its capability
// takes the place of a low-priority pod of the same queue, and the capability still holds.
func TestPreemptionWithinAQueue(t *testing.T) {
	withPriorityClasses(t)
	withQueues(t, util.MakeQueue("capped").Capability(map[v1.ResourceName]string{v1.ResourceCPU: "4"}).Obj())
	submitWith(t, "capped", "low", 4)
	waitAllocation(t, "at the capability", func(a map[string]int64) bool { return a["capped"] == 4 })
	evicted := watchEvictions(t)
	preempted := metricNow(t, "queue_scheduler_preemption_victims_total", map[string]string{"queue": "capped"})
	submitWith(t, "capped", "high", 1)
	if err := util.WaitForPods(context.Background(), cluster.Kube, ns, []string{"capped-high-0"}, settle, "bound", util.IsBound); err != nil {
		t.Fatal(err)
	}
	victims := evicted.drain(t)
	if len(victims) != 1 || victims[0][:len("capped-low-")] != "capped-low-" {
		t.Fatalf("evicted %v; want exactly one low-priority pod of the queue", victims)
	}
	if a := boundCPU(t); a["capped"] > 4 {
		t.Fatalf("capped holds %d CPUs, above its capability of 4", a["capped"])
	}
	if got := metricNow(t, "queue_scheduler_preemption_victims_total", map[string]string{"queue": "capped"}) - preempted; got != 1 {
		t.Errorf("/metrics counts %v preemptions within the queue, want 1", got)
	}
}

// metricNow is the current value of a sample on /metrics, 0 when there is none yet.
func metricNow(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := util.ScrapeMetrics(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	v, _ := util.MetricValue(families, name, labels)
	return v
}

// reclaimCount is how many pods of victim reclaim evicted for queue, as /metrics counts them.
func reclaimCount(t *testing.T, queue, victim string) float64 {
	t.Helper()
	return metricNow(t, "queue_scheduler_reclaim_evictions_total", map[string]string{"queue": queue, "victim_queue": victim})
}

// Pods that reclaim made room for hold their queue's share while their victims leave: the queue's
// other pods take back nothing more. Three queues deserve 20 CPUs each; the borrower holds all 60
// and the third queue's pods fit no node, so the borrower holds 40 above its share while the owner,
// with 30 CPUs of pods, needs only 20. Exactly 4 of the borrower's 5-CPU pods go.
func TestPreemptorsUnderWayHoldTheirQueuesShare(t *testing.T) {
	withQueues(t, util.MakeQueue("borrower").Obj(), util.MakeQueue("owner").Obj(), util.MakeQueue("third").Obj())
	five := map[v1.ResourceName]string{v1.ResourceCPU: "5"}
	for i := range 12 {
		pod := util.MakePod(ns, fmt.Sprintf("borrower-%d", i)).Label(schedulingv1beta1.QueueLabel, "borrower").Req(five).Obj()
		pod.Finalizers = []string{slowExit}
		createPod(t, pod)
	}
	t.Cleanup(func() { releaseFinalizers(t) })
	waitAllocation(t, "the borrower holding the cluster", func(a map[string]int64) bool { return a["borrower"] == 60 })
	for i := range 4 {
		createPod(t, util.MakePod(ns, fmt.Sprintf("third-%d", i)).Label(schedulingv1beta1.QueueLabel, "third").Req(five).
			NodeSelector(map[string]string{"no-such-label": "x"}).Obj())
	}
	for i := range 6 {
		createPod(t, util.MakePod(ns, fmt.Sprintf("owner-%d", i)).Label(schedulingv1beta1.QueueLabel, "owner").Req(five).Obj())
	}
	// The victims stay, held by their finalizer, until 2 of the owner's pods were turned away.
	waitOwnerPods(t, 2, "for its pods not bound yet")
	releaseFinalizers(t)
	waitAllocation(t, "the owner at its share", func(a map[string]int64) bool { return a["owner"] == 20 })
	list, err := cluster.Kube.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var kept int
	for _, p := range list.Items {
		if strings.HasPrefix(p.Name, "borrower-") && p.DeletionTimestamp == nil {
			kept++
		}
	}
	if kept != 8 {
		t.Errorf("the borrower keeps %d of its 12 pods, want 8: the owner needed 4", kept)
	}
}

// waitOwnerPods waits until n of the owner's pods are Unschedulable with text in the message.
func waitOwnerPods(t *testing.T, n int, text string) {
	t.Helper()
	var last []string
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		list, err := cluster.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		last = last[:0]
		for _, p := range list.Items {
			for _, c := range p.Status.Conditions {
				if strings.HasPrefix(p.Name, "owner-") && c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse && strings.Contains(c.Message, text) {
					last = append(last, p.Name)
				}
			}
		}
		return len(last) >= n, nil
	})
	if err != nil {
		t.Fatalf("%d of the owner's pods turned away with %q, want %d: %v", len(last), text, n, last)
	}
}
