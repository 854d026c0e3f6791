package readmodel

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned/fake"
	"github.com/queue-scheduler/queue-scheduler/pkg/holdreport"
	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// A queue's pending work in the order the scheduler takes it: pods it admitted by priority, then
// creation; then what it has not admitted (a Pending PodGroup, an Enqueued QueueUnit, whose pods
// are its own and never work of their own), by creation; a namespace sees its own pieces with their
// places among all of them.
func TestPendingWorkInTheSchedulersOrder(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	at := func(s int) metav1.Time { return metav1.NewTime(t0.Add(time.Duration(s) * time.Second)) }
	pod := func(ns, name string, created int) *v1.Pod {
		p := util.MakePod(ns, name).UID(name).Label(schedulingv1beta1.QueueLabel, "q").
			Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()
		p.CreationTimestamp = at(created)
		return p
	}
	urgent := pod("b", "urgent", 9)
	urgent.Spec.Priority = ptr.To[int32](100)
	ofUnit := pod("a", "sweep-0", 0)
	ofUnit.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "sweep", UID: "sweep"}}
	member := pod("a", "gang-0", 1)
	member.Labels[schedulingv1beta1.PodGroupLabel] = "gang"
	pg := util.MakePodGroup("a", "gang").MinMember(2).Queue("q").MinResources(map[v1.ResourceName]string{v1.ResourceCPU: "2"}).Obj()
	pg.CreationTimestamp = at(3)
	unit := util.MakeQueueUnit("a", "sweep", "q", "sweep").Resource(map[v1.ResourceName]string{v1.ResourceCPU: "4"}).Obj()
	unit.CreationTimestamp = at(2)
	unit.Status.Phase = schedulingv1beta1.QueueUnitEnqueued
	// A unit whose queue's capability was lowered below its resource after it was created.
	tooBig := util.MakeQueueUnit("a", "too-big", "capped", "too-big").Resource(map[v1.ResourceName]string{v1.ResourceCPU: "8"}).Obj()
	tooBig.Status.Phase = schedulingv1beta1.QueueUnitEnqueued
	capped := util.MakeQueue("capped").Capability(map[v1.ResourceName]string{v1.ResourceCPU: "4"}).Obj()
	queues := fake.NewSimpleClientset(util.MakeQueue("q").Obj(), capped, pg, unit, tooBig)
	kube := kubefake.NewClientset(pod("b", "late", 5), pod("a", "early", 4), urgent, ofUnit, member)
	acct := startAccounting(t, ctx, queues, kube)
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return acct.Pods.PodCount("q") == 5 && acct.Synced(), nil
	}); err != nil {
		t.Fatalf("the accounting never counted the pods: %d", acct.Pods.PodCount("q"))
	}
	c := &Model{acct: acct}
	got, ok := c.PendingInQueue("q")
	if !ok {
		t.Fatal("queue q not found")
	}
	var order []string
	for _, w := range got {
		order = append(order, fmt.Sprintf("%d %s/%s pods=%d", w.PositionInQueue, w.Namespace, w.Name, w.Pods))
	}
	want := []string{"1 b/pod.urgent pods=1", "2 a/pod.early pods=1", "3 b/pod.late pods=1",
		"4 a/queueunit.sweep pods=1", "5 a/podgroup.gang pods=1"}
	if !slices.Equal(order, want) {
		t.Errorf("pending work %q, want %q", order, want)
	}
	var mine []string
	for _, w := range c.PendingInNamespace("b") {
		mine = append(mine, fmt.Sprintf("%d %s/%s", w.PositionInQueue, w.Namespace, w.Name))
	}
	if want := []string{"1 b/pod.urgent", "3 b/pod.late"}; !slices.Equal(mine, want) {
		t.Errorf("namespace b's pending work %q, want %q", mine, want)
	}
	for _, w := range got {
		if w.Workload.Kind == visibilityv1beta1.WorkloadQueueUnit && w.Reason != string(schedulingv1beta1.QueueUnitEnqueued) {
			t.Errorf("unit %s waits for its turn, with reason %q; want Enqueued", w.Name, w.Reason)
		}
	}
	waiting, ok := c.PendingInQueue("capped")
	if !ok || len(waiting) != 1 || waiting[0].Reason != holdreport.ExceedsCapability {
		t.Errorf("queue capped's pending work %+v, want the unit above its capability with reason %s", waiting, holdreport.ExceedsCapability)
	}
}

// A pod whose PodGroup does not exist is in no queue: its namespace's pending work lists it alone,
// at no position, in the queue its label names if any, with the reason and message the scheduler
// holds it for; no queue's pending work does. Once its PodGroup exists it waits as its gang.
func TestPendingPodsWithoutTheirPodGroup(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pod := func(name, group string) *v1.Pod {
		return util.MakePod("a", name).UID(name).Label(schedulingv1beta1.PodGroupLabel, group).
			Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()
	}
	labelled := pod("labelled", "trian")
	labelled.Labels[schedulingv1beta1.QueueLabel] = "q"
	placed := pod("placed", "trian")
	placed.Spec.NodeName = "n1"
	foreign := pod("foreign", "trian")
	foreign.Spec.SchedulerName = v1.DefaultSchedulerName
	queues := fake.NewSimpleClientset(util.MakeQueue("q").Obj())
	other := util.MakePod("b", "elsewhere").UID("b-elsewhere").Label(schedulingv1beta1.PodGroupLabel, "gang").Obj()
	kube := kubefake.NewClientset(pod("orphan", "trian"), labelled, placed, foreign, pod("elsewhere", "gang"), other)
	acct := startAccounting(t, ctx, queues, kube)
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return acct.Synced(), nil
	}); err != nil {
		t.Fatal("the accounting never synced")
	}
	c := &Model{acct: acct}
	type row struct {
		Name, Queue     string
		Position, Pods  int32
		Reason, Message string
	}
	rows := func(items []visibilityv1beta1.PendingWorkload) []row {
		var out []row
		for _, w := range items {
			out = append(out, row{w.Name, w.Queue, w.PositionInQueue, w.Pods, w.Reason, w.Message})
		}
		return out
	}
	want := []row{
		{"pod.elsewhere", "", 0, 1, holdreport.PodGroupMissing, `PodGroup "gang" of pod a/elsewhere does not exist`},
		{"pod.labelled", "q", 0, 1, holdreport.PodGroupMissing, `PodGroup "trian" of pod a/labelled does not exist`},
		{"pod.orphan", "", 0, 1, holdreport.PodGroupMissing, `PodGroup "trian" of pod a/orphan does not exist`},
	}
	if diff := cmp.Diff(want, rows(c.PendingInNamespace("a"))); diff != "" {
		t.Errorf("namespace a's pending work (-want,+got):\n%s", diff)
	}
	if got := rows(c.PendingInNamespace("")); len(got) != len(want)+1 {
		t.Errorf("every namespace's pending work %v, want namespace a's and b's pod", got)
	}
	if got, _ := c.PendingInQueue("q"); len(got) != 0 {
		t.Errorf("queue q's pending work %v, want none: no queue holds a pod whose PodGroup does not exist", rows(got))
	}

	if _, err := queues.SchedulingV1beta1().PodGroups("a").Create(ctx, util.MakePodGroup("a", "trian").Queue("q").MinMember(2).Obj(),
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var got []row
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		got = rows(c.PendingInNamespace("a"))
		return len(got) == 2 && got[0].Name == "podgroup.trian" && got[1].Name == "pod.elsewhere", nil
	}); err != nil {
		t.Errorf("once PodGroup trian exists, namespace a's pending work %v, want the gang, then the pod of the missing gang", got)
	}
}

// The live view gives a piece of work its queue's reason now, with the reason the scheduler gives
// that refusal; a moment's refusal, or a queue that takes work that waited for the nodes, leaves what
// the last attempt said; work the queue held back and takes now says so.
func TestQueueReasonNow(t *testing.T) {
	for _, tt := range []struct {
		name, was       string
		refusal         *policy.Refusal
		reason, message string
		ok              bool
	}{
		{"takes it now, held at capability before", holdreport.QueueCapability, nil,
			v1.PodReasonUnschedulable, `queue "q" takes it now: it waits for its next scheduling attempt`, true},
		{"takes it now, waited for the nodes", v1.PodReasonUnschedulable, nil, "", "", false},
		{"exceeds its capability now", v1.PodReasonUnschedulable, &policy.Refusal{Message: "m", AtCapability: true, ExceedsCapability: true},
			holdreport.ExceedsCapability, "m", true},
		{"at its capability now", holdreport.ExceedsCapability, &policy.Refusal{Message: "m", AtCapability: true}, holdreport.QueueCapability, "m", true},
		{"at its share now", holdreport.QueueCapability, &policy.Refusal{Message: "m"}, v1.PodReasonUnschedulable, "m", true},
		{"older work first", "", &policy.Refusal{Message: "m", Behind: true}, "", "", false},
		{"a suspension on its way", "", &policy.Refusal{Message: "m", Suspended: true}, "", "", false},
	} {
		reason, message, ok := queueReasonNow("q", tt.was, tt.refusal)
		if reason != tt.reason || message != tt.message || ok != tt.ok {
			t.Errorf("%s: got %q, %q, %t; want %q, %q, %t", tt.name, reason, message, ok, tt.reason, tt.message, tt.ok)
		}
	}
}
