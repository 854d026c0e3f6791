package cli

import (
	"context"
	"regexp"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// ages hides the AGE column: its values and its padding, which follows their width.
var ages = regexp.MustCompile(`\b(\d+(ms|s|m|h|d)|AGE) +`)

// usages are the figures of a decayed usage, which grow with every second the queue holds something.
var usages = regexp.MustCompile(`cpu (<0\.001|[0-9.]+) core-h, at \S+`)

// jobs lists a queue's work (here a pod, a PodGroup and a QueueUnit) with why it waits; describe
// shows the queue's spec, status, share, work, conditions and events.
func TestDescribeAndJobs(t *testing.T) {
	removeQueues(t, "busy")
	mustRun(t, "create", "busy", "--all-namespaces", "--weight", "2", "--capability", "cpu=10", "--guarantee", "cpu=3")
	ctx := context.Background()
	// A running pod holds 6 of the queue's 10 cpu: the PodGroup and the QueueUnit fit the capability,
	// not the room left beside it.
	holder := util.MakePod("default", "busy-holder").Label(schedulingv1beta1.QueueLabel, "busy").Req(map[v1.ResourceName]string{v1.ResourceCPU: "6"}).Obj()
	if _, err := cluster.Kube.CoreV1().Pods("default").Create(ctx, holder, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cluster.Kube.CoreV1().Pods("default").Delete(ctx, holder.Name, *metav1.NewDeleteOptions(0))
	})
	if err := util.WaitForPods(ctx, cluster.Kube, "default", []string{holder.Name}, settle, "bound", util.IsBound); err != nil {
		t.Fatal(err)
	}
	pg := util.MakePodGroup("default", "big-gang").Queue("busy").MinMember(2).MinResources(map[v1.ResourceName]string{v1.ResourceCPU: "8"}).Obj()
	if _, err := cluster.Queues.SchedulingV1beta1().PodGroups("default").Create(ctx, pg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	job := util.MakeJob("default", "sweep", 1, true)
	if _, err := cluster.Kube.BatchV1().Jobs("default").Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	unit := util.MakeQueueUnit("default", "sweep", "busy", "sweep").Resource(map[v1.ResourceName]string{v1.ResourceCPU: "6"}).Obj()
	if _, err := cluster.Queues.SchedulingV1beta1().QueueUnits("default").Create(ctx, unit, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cluster.Queues.SchedulingV1beta1().PodGroups("default").Delete(ctx, pg.Name, metav1.DeleteOptions{})
		_ = cluster.Queues.SchedulingV1beta1().QueueUnits("default").Delete(ctx, unit.Name, metav1.DeleteOptions{})
		_ = cluster.Kube.BatchV1().Jobs("default").Delete(ctx, job.Name, metav1.DeleteOptions{})
	})
	err := wait.PollUntilContextTimeout(ctx, util.PollInterval, settle, true, func(context.Context) (bool, error) {
		out, err := run(t, "jobs", "busy")
		return err == nil && strings.Count(out, "would exceed its capability") == 2 && strings.Contains(out, "0/2       1 "), nil
	})
	if err != nil {
		t.Fatal("the PodGroup and the QueueUnit never showed why they wait, and where they stand in the queue")
	}
	waitQueue(t, "busy", "counting its work", func(q *queue) bool { return q.Status.Pending == 1 && q.Status.Enqueued == 1 })

	expect(t, "jobs", ages.ReplaceAllString(mustRun(t, "jobs", "busy"), "<age> "), `
KIND        NAMESPACE   NAME          PHASE      MEMBERS   POSITION   <age> WAITING
Pod         default     busy-holder   Pending    1/1       -          <age> -
PodGroup    default     big-gang      Pending    0/2       1          <age> minResources do not fit: queue "busy" would exceed its capability of cpu: 6 allocated + 8 requested > 10
QueueUnit   default     sweep         Enqueued   -         2          <age> resource does not fit: queue "busy" would exceed its capability of cpu: 6 allocated + 6 requested > 10`[1:])

	mustRun(t, "suspend", "busy", "--wait", "--reason", "Maintenance", "--message", "node pool upgrade")
	waitQueue(t, "busy", "Suspended with what it holds as its share", func(q *queue) bool {
		return q.Status.State == "Suspended" && q.Status.Deserved.Cpu().Value() == 6
	})
	// The status's figures (the usage's first checkpoint among them) and the event are written apart
	// from the state waited for: describe is read until it shows them all.
	// busy's pod has held 6 cpus since it was bound: its usage is counted (the figures move on).
	wantHead := `
Name:                   busy
Parent:                 root
State:                  Suspended (requested: Suspended)
Weight:                 2
Priority:               0
Reclaimable:            true
Namespaces:             all
Capability:             cpu=10
Guarantee:              cpu=3
Allocated:              cpu=6
Deserved:               cpu=6,memory=0,pods=0
Share of the cluster:   cpu 38%, memory 0%, pods 0%
Usage (decayed):        cpu <n> core-h, at <time>
Effective weight:       its weight
PodGroups:              1 pending, 0 inqueue, 0 running, 0 unknown, 0 completed
QueueUnits:             1 enqueued, 0 dequeued
Conditions:
  TYPE     STATUS   REASON      MESSAGE
  Active   False    Suspended   suspended: new work is accepted but nothing new is allocated; running pods keep running`[1:]
	var described, head string
	err = wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(context.Context) (bool, error) {
		described = mustRun(t, "describe", "busy")
		head, _, _ = strings.Cut(described, "Jobs:")
		head = usages.ReplaceAllString(head, "cpu <n> core-h, at <time>")
		return strings.Contains(described, "QueueSuspended") && strings.TrimRight(head, "\n") == wantHead, nil
	})
	if err != nil {
		expect(t, "describe", head, wantHead)
		t.Fatalf("describe never showed the suspended queue with its event:\n%s", described)
	}
	for _, want := range []string{
		"Jobs:\n  KIND ",
		"  QueueUnit   default     sweep         Enqueued   -",
		"Events:\n  TYPE ",
		`QueueSuspended   `,
		`SuspendQueue by Command default/suspend-busy-`,
		`(Maintenance): node pool upgrade: spec.state Open -> Suspended`,
	} {
		if !strings.Contains(described, want) {
			t.Errorf("describe lacks %q:\n%s", want, described)
		}
	}
}
