package gang

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	kubefake "k8s.io/client-go/kubernetes/fake"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/utils/clock"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// count reads each member's task from queue-scheduler's label or Volcano's annotation.
func TestCountByTask(t *testing.T) {
	pods := []*v1.Pod{
		util.MakePod("ns", "ps").UID("ps").Label(schedulingv1beta1.TaskLabel, "ps").Node("n").Obj(),
		util.MakePod("ns", "w0").UID("w0").Obj(),
		util.MakePod("ns", "w1").UID("w1").Obj(),
		util.MakePod("ns", "plain").UID("plain").Obj(),
	}
	pods[1].Annotations = map[string]string{schedulingv1beta1.VolcanoTaskAnnotation: "worker"}
	pods[2].Labels = map[string]string{schedulingv1beta1.VolcanoTaskAnnotation: "worker"}
	m := newMembers(func(string) []*v1.Pod { return pods }, heldSet{"w1": true}.holds, func() int64 { return 0 }, clock.RealClock{})
	c := m.count("ns/g")
	if c.live.All != 4 || c.assigned.All != 2 {
		t.Errorf("live %d assigned %d, want 4 and 2", c.live.All, c.assigned.All)
	}
	if c.live.Tasks["ps"] != 1 || c.live.Tasks["worker"] != 2 || c.assigned.Tasks["ps"] != 1 || c.assigned.Tasks["worker"] != 1 {
		t.Errorf("per task: live %v assigned %v", c.live.Tasks, c.assigned.Tasks)
	}
}

// heldSet stands for the accounting's pod table: the members it holds assumed, by UID.
type heldSet map[types.UID]bool

func (h heldSet) holds(pod *v1.Pod) bool { return h[pod.UID] }

// noneHeld is a pod table that holds no member assumed.
func noneHeld(*v1.Pod) bool { return false }

// Permit counts as reserved the members the accounting's pod table holds assumed (Gang's Reserve, as
// Proportion's), and stops counting one at Gang's Unreserve, before Proportion's runs after it: Gang
// keeps no record of its own.
func TestPermitCountsTheMembersTheAccountingAssumed(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first, second := member("g", "g-0", 0, ""), member("g", "g-1", 0, "")
	g, _ := watchedGang(t, ctx, kubefake.NewClientset(first, second))
	if err := wait.PollUntilContextTimeout(ctx, time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
		return len(g.acct.Gangs.Members("ns/g")) == 2 && g.acct.Pods.PodCount("q") == 2, nil
	}); err != nil {
		t.Fatal("the accounting never counted the gang's two members")
	}
	placed := func(pod *v1.Pod) *v1.Pod {
		p := pod.DeepCopy()
		p.Spec.NodeName = "n"
		return p
	}
	g.Reserve(ctx, nil, placed(first), "n")
	if status, _ := g.Permit(ctx, nil, first, "n"); status.Code() != fwk.Wait {
		t.Fatalf("one of two members reserved: Permit %v, want Wait", status)
	}
	g.Reserve(ctx, nil, placed(second), "n")
	if c := g.members.count("ns/g"); c.assigned.All != 2 {
		t.Errorf("both members reserved: %d assigned, want 2", c.assigned.All)
	}
	g.members.rejectedBySibling(second.UID)
	g.Unreserve(ctx, nil, second, "n")
	if c := g.members.count("ns/g"); c.assigned.All != 1 {
		t.Errorf("a member unreserved, Proportion's Unreserve not run yet: %d assigned, want 1", c.assigned.All)
	}
}
