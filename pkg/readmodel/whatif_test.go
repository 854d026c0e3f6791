package readmodel

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned/fake"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// whatIfFixture is a read model on a node of 8 CPUs, all held until a runtime bound 10 minutes
// from now by a pod of queue busy; a 4-CPU pod of queue mine waits in namespace ns.
func whatIfFixture(t *testing.T) (*Model, time.Time) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	now := time.Now().Truncate(time.Second)
	running := util.MakePod("busy", "running").UID("running").Label(schedulingv1beta1.QueueLabel, "busy").
		Req(map[v1.ResourceName]string{v1.ResourceCPU: "8"}).Obj()
	running.Spec.NodeName, running.Spec.ActiveDeadlineSeconds = "n", ptr.To[int64](600)
	running.Spec.TerminationGracePeriodSeconds = ptr.To[int64](0)
	running.Status.Phase, running.Status.StartTime = v1.PodRunning, ptr.To(metav1.NewTime(now))
	waiting := util.MakePod("ns", "waiting").UID("waiting").Label(schedulingv1beta1.QueueLabel, "mine").
		Req(map[v1.ResourceName]string{v1.ResourceCPU: "4"}).Obj()
	kube := kubefake.NewClientset(util.MakeNode("n", "8", "16Gi"), running, waiting)
	acct := startAccounting(t, ctx, fake.NewSimpleClientset(util.MakeQueue("busy").Obj(), util.MakeQueue("mine").Obj()), kube)
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return acct.Pods.PodCount("busy") == 1 && acct.Pods.PodCount("mine") == 1 && acct.Synced() && len(acct.Deserved("mine")) > 0, nil
	}); err != nil {
		t.Fatal("the accounting never counted the pods")
	}
	return &Model{acct: acct}, now.Add(600 * time.Second)
}

// A new job is answered beside the namespace's pending pod: both start when the running pod ends,
// and the new one, submitted last, fits beside the waiting one. The shares move with the new demand
// and the new weight: of the 8 CPUs, mine asks for 8 with the job, and takes 3 parts of 4.
func TestWhatIfPlaysNewWorkBehindTheWaiting(t *testing.T) {
	c, end := whatIfFixture(t)
	// Limits alone: the requests default to them.
	job := visibilityv1beta1.NewWorkload{Name: "train", Queue: "mine", Pods: 2, Gang: true, Template: v1.PodTemplateSpec{
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{
			Limits: v1.ResourceList{v1.ResourceCPU: resource.MustParse("2")}}}}}}}
	status, err := c.WhatIf(context.Background(), "ns", visibilityv1beta1.WhatIfSpec{Workloads: []visibilityv1beta1.NewWorkload{job},
		Queues: []visibilityv1beta1.QueueChange{{Name: "mine", Weight: ptr.To[int32](3)}}}, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(status.Workloads) != 2 {
		t.Fatalf("workloads %+v; want the waiting pod and the new job", status.Workloads)
	}
	for _, w := range status.Workloads {
		s := w.StartIf
		if s == nil || s.P50 == nil || s.P50.Before(&metav1.Time{Time: end}) || s.P50.After(end.Add(forecastResolution)) {
			t.Errorf("%s/%s starts with the change at %+v; want the running pod's end %v", w.Workload.Kind, w.Workload.Name, s, end)
		}
	}
	if w := status.Workloads[0]; w.Workload.Name != "waiting" || w.Start == nil || w.Start.P50 == nil {
		t.Errorf("the waiting pod: %+v; want its start now too", w)
	}
	for _, q := range status.Queues {
		if q.Name == "mine" && (q.Deserved.Cpu().MilliValue() != 4000 || q.DeservedIf.Cpu().MilliValue() != 6000) {
			t.Errorf("queue mine deserves %v now and %v with the change; want 4 and 6", q.Deserved.Cpu(), q.DeservedIf.Cpu())
		}
	}
}

// A closed queue refuses the new work, and says so; the namespace's work waiting there already
// still starts. A suspended queue's waiting work does not start.
func TestWhatIfClosedAndSuspendedQueues(t *testing.T) {
	c, _ := whatIfFixture(t)
	job := visibilityv1beta1.NewWorkload{Name: "train", Queue: "mine", Pods: 1, Template: oneCPU()}
	for _, tt := range []struct {
		state       schedulingv1beta1.QueueState
		refused     bool
		waitingRuns bool
	}{
		{schedulingv1beta1.QueueStateClosed, true, true},
		{schedulingv1beta1.QueueStateSuspended, false, false},
	} {
		status, err := c.WhatIf(context.Background(), "ns", visibilityv1beta1.WhatIfSpec{
			Queues:    []visibilityv1beta1.QueueChange{{Name: "mine", State: tt.state}},
			Workloads: []visibilityv1beta1.NewWorkload{job}}, false)
		if err != nil {
			t.Fatal(err)
		}
		waiting, train := status.Workloads[0], status.Workloads[1]
		if got := train.Refused != ""; got != tt.refused || (tt.refused && !strings.Contains(train.Refused, "accepts no new work")) {
			t.Errorf("%s: the new job refused %q; want refused %v", tt.state, train.Refused, tt.refused)
		}
		if got := waiting.StartIf != nil && waiting.StartIf.P50 != nil; got != tt.waitingRuns {
			t.Errorf("%s: the waiting pod starts with the change: %+v; want %v", tt.state, waiting.StartIf, tt.waitingRuns)
		}
	}
}

// Work is refused as admission would refuse it: a pod that asks alone for more than the queue's
// capability, and a gang whose whole asks for more; pods that each fit are not, however many.
func TestWhatIfRefusesWorkAboveTheCapability(t *testing.T) {
	c, _ := whatIfFixture(t)
	cpus := func(n string) v1.PodTemplateSpec {
		return v1.PodTemplateSpec{Spec: util.MakePod("", "").Req(map[v1.ResourceName]string{v1.ResourceCPU: n}).Obj().Spec}
	}
	workloads := []visibilityv1beta1.NewWorkload{
		{Name: "many", Queue: "mine", Pods: 4, Template: cpus("2")},
		{Name: "big", Queue: "mine", Pods: 1, Template: cpus("4")},
		{Name: "gang", Queue: "mine", Pods: 2, Gang: true, Template: cpus("2")},
	}
	status, err := c.WhatIf(context.Background(), "ns", visibilityv1beta1.WhatIfSpec{Workloads: workloads,
		Queues: []visibilityv1beta1.QueueChange{{Name: "mine", Capability: v1.ResourceList{v1.ResourceCPU: resource.MustParse("3")}}}}, false)
	if err != nil {
		t.Fatal(err)
	}
	refused := map[string]string{}
	for _, w := range status.Workloads[1:] {
		refused[w.Workload.Name] = w.Refused
	}
	for name, want := range map[string]string{"many": "", "big": `cpu 4 requested > 3`, "gang": `cpu 4 requested > 3`} {
		if got := refused[name]; (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("workload %s refused %q; want %q", name, got, want)
		}
	}
}

// oneCPU is a template of one container asking for a CPU.
func oneCPU() v1.PodTemplateSpec {
	return v1.PodTemplateSpec{Spec: util.MakePod("", "").Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj().Spec}
}

// What cannot be asked is Invalid, each field named: an unknown queue, a weight out of range, a state
// that is none, a guarantee above the capability; a workload whose name is no DNS subdomain, the
// same name twice, no pods or too many, no container, a negative request, an unknown priority class,
// another scheduler, a node already.
func TestWhatIfRefusesBadInputByField(t *testing.T) {
	c, _ := whatIfFixture(t)
	negative, otherScheduler, onNode, unknownClass := oneCPU(), oneCPU(), oneCPU(), oneCPU()
	negative.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse("-1")}
	otherScheduler.Spec.SchedulerName = "default-scheduler"
	onNode.Spec.NodeName = "n"
	unknownClass.Spec.PriorityClassName = "urgent"
	_, err := c.WhatIf(context.Background(), "ns", visibilityv1beta1.WhatIfSpec{
		Queues: []visibilityv1beta1.QueueChange{{Name: "gone"}, {Name: "mine", Weight: ptr.To[int32](0), State: "Paused"},
			{Name: "busy", Capability: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")},
				Guarantee: v1.ResourceList{v1.ResourceCPU: resource.MustParse("2")}}},
		Workloads: []visibilityv1beta1.NewWorkload{{Name: "A/0", Pods: 1, Template: oneCPU()}, {Name: "a", Pods: 1, Template: oneCPU()},
			{Name: "a", Pods: 1, Template: oneCPU()}, {Name: "b", Pods: 0}, {Name: "c", Pods: maxWhatIfPods + 1},
			{Name: "d", Pods: 1}, {Name: "e", Pods: 1, Template: negative}, {Name: "f", Pods: 1, Template: unknownClass},
			{Name: "g", Pods: 1, Template: otherScheduler}, {Name: "h", Pods: 1, Template: onNode}}}, true)
	if !apierrors.IsInvalid(err) {
		t.Fatalf("got %v, want Invalid", err)
	}
	for _, want := range []string{"spec.queues[0].name: Not found", "spec.queues[1].weight", "spec.queues[1].state",
		"spec.queues[2].guarantee", "spec.workloads[0].name: Invalid", "spec.workloads[2].name: Duplicate",
		"spec.workloads[3].pods", "spec.workloads[4].pods", "spec.workloads[5].template.spec.containers: Required",
		"spec.workloads[6].template.spec.containers[0].resources.requests[cpu]", "spec.workloads[7].template.spec.priorityClassName: Not found",
		"spec.workloads[8].template.spec.schedulerName", "spec.workloads[9].template.spec.nodeName: Forbidden"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

// A parent suspended in the change suspends its children as the controller's cascade would: their
// waiting work does not start. The answer holds the queues that take the namespace's work and
// those above them, and not the others.
func TestWhatIfCascadesAndKeepsToTheNamespacesQueues(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	waiting := util.MakePod("ns", "waiting").UID("waiting").Label(schedulingv1beta1.QueueLabel, "child").
		Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()
	queues := fake.NewSimpleClientset(util.MakeQueue("parent").Obj(), util.MakeQueue("child").Parent("parent").Obj(),
		util.MakeQueue("elsewhere").Namespaces(map[string]string{"team": "other"}).Obj())
	acct := startAccounting(t, ctx, queues, kubefake.NewClientset(util.MakeNode("n", "8", "16Gi"), waiting))
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return acct.Pods.PodCount("child") == 1 && acct.Synced(), nil
	}); err != nil {
		t.Fatal("the accounting never counted the pod")
	}
	c := &Model{acct: acct}
	status, err := c.WhatIf(context.Background(), "ns", visibilityv1beta1.WhatIfSpec{Queues: []visibilityv1beta1.QueueChange{
		{Name: "parent", State: schedulingv1beta1.QueueStateSuspended}}}, false)
	if err != nil {
		t.Fatal(err)
	}
	if w := status.Workloads; len(w) != 1 || w[0].Start == nil || w[0].Start.P50 == nil || w[0].StartIf == nil || w[0].StartIf.P50 != nil {
		t.Errorf("the child's waiting pod: %+v; want it to start now, and not with its parent suspended", w)
	}
	var names []string
	for _, q := range status.Queues {
		names = append(names, q.Name)
	}
	if strings.Join(names, ",") != "child,parent" {
		t.Errorf("queues answered %v; want child,parent: not elsewhere, which takes no work of ns", names)
	}
	// Elsewhere and a queue that does not exist are refused alike to a namespace's viewer, and
	// answered to one who may read every queue.
	for _, name := range []string{"elsewhere", "gone"} {
		_, err := c.WhatIf(context.Background(), "ns", visibilityv1beta1.WhatIfSpec{Queues: []visibilityv1beta1.QueueChange{{Name: name, Weight: ptr.To[int32](2)}}}, false)
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.queues[0].name: Forbidden") || !strings.Contains(err.Error(), "list queuesummaries") {
			t.Errorf("a viewer of ns asking about queue %s: %v; want it refused as out of reach", name, err)
		}
	}
	status, err = c.WhatIf(context.Background(), "ns", visibilityv1beta1.WhatIfSpec{Queues: []visibilityv1beta1.QueueChange{{Name: "elsewhere", Weight: ptr.To[int32](2)}}}, true)
	if err != nil || len(status.Queues) != 3 {
		t.Errorf("one who reads every queue: %v, %+v; want every queue answered", err, status)
	}
}
