package gang

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/clock"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting/accountingtest"
	"github.com/queue-scheduler/queue-scheduler/pkg/holdreport"
	"github.com/queue-scheduler/queue-scheduler/pkg/podindex"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// An admitted gang whose members, however picked, ask together for more than a capability of its
// queue or of an ancestor is held with ExceedsCapability and the numbers, each pod fitting on its
// own; one that fits, or whose queue caps nothing it asks for, is let in.
func TestGateHoldsAGangThatNeverFitsItsQueue(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sized := func(name, cpu string) *v1.Pod {
		p := member("g", name, 0, "")
		p.Spec.Containers = []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: util.ResourceList(map[v1.ResourceName]string{v1.ResourceCPU: cpu})}}}
		return p
	}
	// Any 3 of the 4 ask for at least 1+2+3 = 6 cpu.
	acct, _ := accountingtest.Start(ctx, t, kubefake.NewClientset(sized("g-0", "3"), sized("g-1", "1"), sized("g-2", "4"), sized("g-3", "2")),
		util.MakeQueue("org").Capability(map[v1.ResourceName]string{v1.ResourceCPU: "5"}).Obj(),
		util.MakeQueue("team").Parent("org").Capability(map[v1.ResourceName]string{v1.ResourceMemory: "64Gi"}).Obj(),
		util.MakeQueue("roomy").Capability(map[v1.ResourceName]string{v1.ResourceCPU: "6"}).Obj(),
		util.MakeQueue("uncapped").Obj())
	g := &Gang{acct: acct, clock: clock.RealClock{}, members: newMembers(acct.Gangs.Members, acct.Pods.Holds, func() int64 { return 0 }, clock.RealClock{})}
	admitted := func(queue string) *schedulingv1beta1.PodGroup {
		p := util.MakePodGroup("ns", "g").Queue(queue).MinMember(3).Obj()
		p.Status.Phase = schedulingv1beta1.PodGroupInqueue
		return p
	}
	why := g.gate(admitted("team"), "ns/g")
	want := `podgroup ns/g cannot run its 3 members together: the request exceeds the capability of queue "org": cpu 6 requested > 5; it cannot run until the capability is raised`
	if why.Reason != holdreport.ExceedsCapability || why.Message != want {
		t.Errorf("a gang above its parent's capability: got %s %q, want %s %q", why.Reason, why.Message, holdreport.ExceedsCapability, want)
	}
	for _, queue := range []string{"roomy", "uncapped"} {
		if why := g.gate(admitted(queue), "ns/g"); why.Message != "" {
			t.Errorf("a gang in queue %s: held %s %q, want let in", queue, why.Reason, why.Message)
		}
	}
}

// After a computation of the shares, the held gangs are looked at again only when the queues' specs
// the snapshot rests on moved since the last look: other computations change no capability.
func TestHeldGangsLookedAtAgainUnderNewSpecsOnly(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pods := []*v1.Pod{member("g", "g-0", 0, ""), member("g", "g-1", 0, "")}
	acct, _ := accountingtest.Start(ctx, t, kubefake.NewClientset(), util.MakeQueue("q").Obj(),
		util.MakePodGroup("ns", "g").MinMember(2).Queue("q").Obj())
	// The first look is under the specs of the accounting's first computation of the shares, which
	// runs on its own goroutine: a look before it would be under no specs, and the next one under
	// new ones.
	if err := wait.PollUntilContextTimeout(ctx, time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
		return acct.Snapshot().QueueSpecs != 0, nil
	}); err != nil {
		t.Fatal("the shares were never computed")
	}
	handle := &activations{pods: make(chan string, 4)}
	g := &Gang{handle: handle, acct: acct, clock: clock.RealClock{}, held: podindex.New(), reporter: holdreport.New(nil, nil, nil, clock.RealClock{}),
		members: newMembers(func(string) []*v1.Pod { return pods }, noneHeld, func() int64 { return 0 }, clock.RealClock{})}
	g.held.Add(pods[0], "ns/g")
	g.recheckHeld()
	wantActivated(t, handle, "g-0", "at the first look")
	g.held.Add(pods[0], "ns/g")
	g.recheckHeld()
	select {
	case got := <-handle.pods:
		t.Errorf("activated %s again under the same specs", got)
	default:
	}
}
