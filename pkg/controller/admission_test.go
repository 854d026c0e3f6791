package controller

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	kubefake "k8s.io/client-go/kubernetes/fake"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned/fake"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// A Pending PodGroup whose minResources exceed its queue's capability on their own (lowered after
// it was created) is refused with the reason ExceedsCapability and the numbers; one that only does
// not fit beside what the queue holds is NotAdmitted: it may be once the holder leaves.
func TestPodGroupAboveTheCapabilityIsRefusedForGood(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	capped := util.MakeQueue("capped").Capability(map[v1.ResourceName]string{v1.ResourceCPU: "4"}).Obj()
	holder := util.MakePod("a", "holder").UID("holder").Label(schedulingv1beta1.QueueLabel, "capped").
		Req(map[v1.ResourceName]string{v1.ResourceCPU: "3"}).Obj()
	holder.Spec.NodeName = "n"
	acct := startAccounting(t, ctx, fake.NewSimpleClientset(capped), kubefake.NewClientset(util.MakeNode("n", "16", "64Gi"), holder))
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return acct.Pods.PodCount("capped") == 1 && acct.Synced(), nil
	}); err != nil {
		t.Fatal("the accounting never counted the holder")
	}
	c := &Controller{acct: acct}
	for _, tt := range []struct {
		name, cpu, reason, message string
	}{
		{name: "above the capability alone", cpu: "8", reason: ReasonExceedsCapability,
			message: `minResources do not fit: the request exceeds the capability of queue "capped": cpu 8 requested > 4`},
		{name: "above it beside what the queue holds", cpu: "2", reason: ReasonNotAdmitted,
			message: `minResources do not fit: queue "capped" would exceed its capability of cpu: 3 allocated + 2 requested > 4`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pg := util.MakePodGroup("a", "g-"+tt.cpu).Queue("capped").MinMember(1).MinResources(map[v1.ResourceName]string{v1.ResourceCPU: tt.cpu}).Obj()
			a := c.admitPodGroup(pg)
			if a.admitted || a.reason != tt.reason || !strings.HasPrefix(a.refusal, tt.message) {
				t.Errorf("admission %+v; want refused with reason %q and a refusal beginning %q", a, tt.reason, tt.message)
			}
		})
	}
}

// A queue opened in its informer's store a moment before the accounting's handler heard of it is
// still Suspended in the snapshot: a PodGroup's admission decides nothing on it (the pass stops and
// runs again), and admits the group once the snapshot takes the change in.
func TestAdmissionWaitsForTheSnapshotToTakeInTheQueuesChange(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	paused := util.MakeQueue("paused").State(schedulingv1beta1.QueueStateSuspended).Obj()
	client := fake.NewSimpleClientset(paused)
	acct := startAccounting(t, ctx, client, kubefake.NewClientset(util.MakeNode("n", "16", "64Gi")))
	// Synced first: every handler has heard of what the informers started with, so that no change
	// on its way makes the next snapshot read the queues anew.
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		if !acct.Synced() {
			return false, nil
		}
		q := acct.Snapshot().Queue("paused")
		return q != nil && q.Suspended, nil
	}); err != nil {
		t.Fatal("the snapshot never held the queue Suspended")
	}
	opened := paused.DeepCopy()
	opened.Spec.State, opened.Generation = schedulingv1beta1.QueueStateOpen, 2
	if err := acct.Store.QueueInformer().GetIndexer().Update(opened); err != nil {
		t.Fatal(err)
	}
	c := &Controller{acct: acct}
	pg := util.MakePodGroup("a", "g").Queue("paused").MinMember(1).MinResources(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()
	if a := c.admitPodGroup(pg); !a.behind || a.admitted || a.refusal != "" {
		t.Fatalf("admission on a snapshot behind the queue's change: %+v; want nothing decided", a)
	}
	// The same change reaches the accounting's handler (the store above stood for the informer's,
	// updated before its handlers run).
	written := opened.DeepCopy()
	written.Generation = 3
	if _, err := client.SchedulingV1beta1().Queues().Update(ctx, written, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return c.admitPodGroup(pg).admitted, nil
	}); err != nil {
		t.Errorf("the group was never admitted once the accounting heard of the change: %+v", c.admitPodGroup(pg))
	}
}

// A queue created a moment before the accounting's handler heard of it is not in the snapshot,
// which would take it for no bar: a PodGroup's admission waits for it, and is checked against the
// queue's capability once the snapshot holds it.
func TestAdmissionWaitsForTheSnapshotToHoldANewQueue(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := fake.NewSimpleClientset()
	acct := startAccounting(t, ctx, client, kubefake.NewClientset(util.MakeNode("n", "16", "64Gi")))
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return acct.Synced(), nil
	}); err != nil {
		t.Fatal("the accounting never synced")
	}
	acct.Snapshot() // built whole before the queue comes: the next builds copy what changed
	fresh := util.MakeQueue("fresh").Capability(map[v1.ResourceName]string{v1.ResourceCPU: "2"}).Obj()
	if err := acct.Store.QueueInformer().GetIndexer().Add(fresh.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	c := &Controller{acct: acct}
	pg := util.MakePodGroup("a", "g").Queue("fresh").MinMember(1).MinResources(map[v1.ResourceName]string{v1.ResourceCPU: "4"}).Obj()
	if a := c.admitPodGroup(pg); !a.behind || a.admitted {
		t.Fatalf("admission into a queue the snapshot does not hold yet: %+v; want nothing decided", a)
	}
	// The queue's creation reaches the informer and its handlers (the store above stood for the
	// informer's, which holds an object before its handlers hear of it).
	if err := acct.Store.QueueInformer().GetIndexer().Delete(fresh); err != nil {
		t.Fatal(err)
	}
	if _, err := client.SchedulingV1beta1().Queues().Create(ctx, fresh, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return acct.Snapshot().Queue("fresh") != nil, nil
	}); err != nil {
		t.Fatal("the snapshot never held the new queue")
	}
	if a := c.admitPodGroup(pg); a.admitted || a.reason != ReasonExceedsCapability {
		t.Errorf("4 cpu into a queue capped at 2: %+v; want refused, ExceedsCapability", a)
	}
}
