package gang

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/utils/clock"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting/accountingtest"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned/fake"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

func member(group, name string, priority int32, node string) *v1.Pod {
	p := util.MakePod("ns", name).UID(name).Priority(priority).Node(node).Obj()
	if group != "" {
		p.Labels = map[string]string{schedulingv1beta1.PodGroupLabel: group}
	}
	return p
}

// queued is pod, created at created, as the scheduler's queue holds it: queued at queuedAt.
func queued(t *testing.T, pod *v1.Pod, created, queuedAt time.Time) fwk.QueuedEntityInfo {
	t.Helper()
	pod.CreationTimestamp = metav1.NewTime(created)
	pi, err := framework.NewPodInfo(pod)
	if err != nil {
		t.Fatal(err)
	}
	return &framework.QueuedPodInfo{PodInfo: pi, QueueingParams: framework.QueueingParams{Timestamp: queuedAt}}
}

func TestLessKeepsGangsTogether(t *testing.T) {
	now := time.Now()
	podGroups := map[string]time.Time{"ns/early": now.Add(-time.Hour), "ns/late": now.Add(-time.Minute)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	acct, _ := accountingtest.Start(ctx, t, kubefake.NewClientset())
	g := &Gang{acct: acct, podGroupCreated: func(group types.NamespacedName) (time.Time, bool) { c, ok := podGroups[group.String()]; return c, ok }}
	// A late gang's member created and queued first still comes after every member of the earlier
	// gang, and members of one gang come one after the other whatever their times; pods of no gang
	// by their creation, however late they were queued again.
	lateFirst := queued(t, member("late", "late-0", 0, ""), now.Add(-50*time.Minute), now.Add(-50*time.Minute))
	early0 := queued(t, member("early", "early-0", 0, ""), now, now)
	early1 := queued(t, member("early", "early-1", 0, ""), now.Add(-time.Second), now.Add(-time.Second))
	urgent := queued(t, member("", "urgent", 10, ""), now, now)
	loner := queued(t, member("", "loner", 0, ""), now.Add(-2*time.Hour), now)
	twin := queued(t, member("", "loner-twin", 0, ""), now.Add(-2*time.Hour), now.Add(-3*time.Hour))
	younger := queued(t, member("", "younger", 0, ""), now.Add(-time.Hour), now.Add(-3*time.Hour))
	tests := []struct {
		name string
		a, b fwk.QueuedEntityInfo
		want bool
	}{
		{"priority first", urgent, early0, true},
		{"earlier gang before later gang", early0, lateFirst, true},
		{"later gang after earlier gang", lateFirst, early1, false},
		{"members of one gang tie", early0, early1, false},
		{"an older pod without gang before a younger gang", loner, early0, true},
		{"pods created at once, by name", loner, twin, true},
		{"pods created at once, by name, the other way", twin, loner, false},
		{"an older pod queued again before a younger pod queued earlier", loner, younger, true},
	}
	for _, tt := range tests {
		if got := g.Less(tt.a, tt.b); got != tt.want {
			t.Errorf("%s: Less = %t, want %t", tt.name, got, tt.want)
		}
	}
	// The queue's heap compares at every step: comparing pods builds nothing.
	if allocs := testing.AllocsPerRun(100, func() { g.Less(loner, twin) }); allocs != 0 {
		t.Errorf("comparing two pods allocates %.0f times", allocs)
	}
}

// A gang's pods wait until its queue admits it: a group with minResources until the controller
// writes Inqueue, one without as soon as its queue takes it (open, and selecting the namespace).
// Once in, they wait for the rest of the gang.
func TestGateMessage(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	acct, _ := accountingtest.Start(ctx, t, kubefake.NewClientset(), util.MakeQueue("q").Obj(),
		util.MakeQueue("suspended").State(schedulingv1beta1.QueueStateSuspended).Obj(), util.MakeQueue("closed-to-ns").NoNamespaces().Obj())
	pods := map[string][]*v1.Pod{"ns/g": {member("g", "g-0", 0, ""), member("g", "g-1", 0, "")}}
	g := &Gang{acct: acct, clock: clock.RealClock{}, members: newMembers(func(key string) []*v1.Pod { return pods[key] }, noneHeld, func() int64 { return 0 }, clock.RealClock{})}
	pg := func(queue string, phase schedulingv1beta1.PodGroupPhase, minMember int32, minResources map[v1.ResourceName]string) *schedulingv1beta1.PodGroup {
		p := util.MakePodGroup("ns", "g").Queue(queue).MinMember(minMember).MinResources(minResources).Obj()
		p.Status.Phase = phase
		return p
	}
	cpu := map[v1.ResourceName]string{v1.ResourceCPU: "2"}
	tests := []struct {
		name string
		pg   *schedulingv1beta1.PodGroup
		want string
	}{
		{"not admitted, takes room", pg("q", schedulingv1beta1.PodGroupPending, 2, cpu), "podgroup ns/g is Pending: its queue has not admitted it yet"},
		{"no phase yet, takes room", pg("q", "", 2, cpu), "podgroup ns/g is Pending"},
		{"no phase yet, takes no room", pg("q", "", 2, nil), ""},
		{"no phase yet, takes no room, too few members", pg("q", "", 3, nil), "podgroup ns/g has 2 of its minMember 3 pods"},
		{"takes no room, queue suspended", pg("suspended", "", 2, nil), "podgroup ns/g is Pending"},
		{"takes no room, queue refuses the namespace", pg("closed-to-ns", schedulingv1beta1.PodGroupPending, 2, nil), "podgroup ns/g is Pending"},
		{"takes no room, queue missing", pg("gone", "", 2, nil), "podgroup ns/g is Pending"},
		{"too few members", pg("q", schedulingv1beta1.PodGroupInqueue, 3, cpu), "podgroup ns/g has 2 of its minMember 3 pods"},
		{"enough members", pg("q", schedulingv1beta1.PodGroupInqueue, 2, cpu), ""},
		{"running gang takes replacements", pg("q", schedulingv1beta1.PodGroupRunning, 3, cpu), ""},
	}
	for _, tt := range tests {
		got := g.gateMessage(tt.pg, "ns/g")
		if (tt.want == "") != (got == "") || len(got) < len(tt.want) || got[:len(tt.want)] != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestMembersCountAndDenial(t *testing.T) {
	pods := map[string][]*v1.Pod{"ns/g": {member("g", "bound", 0, "n"), member("g", "reserved", 0, ""), member("g", "pending", 0, "")}}
	queues := int64(1)
	reserved := heldSet{"reserved": true}
	m := newMembers(func(key string) []*v1.Pod { return pods[key] }, reserved.holds, func() int64 { return queues }, clock.RealClock{})
	if c := m.count("ns/g"); c.live.All != 3 || c.assigned.All != 2 {
		t.Errorf("count: got %+v, want 3 live, 2 assigned", c)
	}
	m.rejectedBySibling("reserved")
	if bySibling, _ := m.release("reserved"); !bySibling {
		t.Error("release of a member rejected for a sibling: want bySibling")
	}
	delete(reserved, "reserved") // Unreserve: the accounting forgets it
	if c := m.count("ns/g"); c.assigned.All != 1 {
		t.Errorf("after release: %d assigned, want 1", c.assigned.All)
	}
	m.deny("ns/g", time.Minute)
	m.deny("ns/other", time.Minute)
	if lifted := m.roomFreed(); !slices.Equal(slices.Sorted(slices.Values(lifted)), []string{"ns/g", "ns/other"}) {
		t.Errorf("room freed lifted %v; want every denial", lifted)
	}
	if m.isDenied("ns/g") || m.isDenied("ns/other") {
		t.Error("denials after room freed: want none left")
	}
	m.deny("ns/lapsed", -time.Second)
	if m.isDenied("ns/lapsed") {
		t.Error("a denial past its window still holds")
	}
	// A queue's spec changed: whichever handler brings the members back first, they are not denied.
	m.deny("ns/g", time.Minute)
	queues++
	if m.isDenied("ns/g") {
		t.Error("a denial made before a queue's spec changed still holds")
	}
}

// A gang refused on shares computed before a queue's spec changed (a borrower turned reclaimable,
// stored in the informer but not yet in the shares) is not denied by that refusal, whichever comes
// first of the refusal and the handlers that hear of the change; a refusal made on shares that
// include the change denies it.
func TestDenialRestsOnTheSharesOfItsAttempt(t *testing.T) {
	queues, sharesQueues := int64(1), int64(1)
	m := newMembers(func(string) []*v1.Pod { return nil }, noneHeld, func() int64 { return queues }, clock.RealClock{})
	m.attempt("ns/g", sharesQueues) // the attempt reads the shares of version 1
	queues++                        // the borrower's flip is stored, and its handlers run before the refusal
	m.deny("ns/g", time.Minute)
	if m.isDenied("ns/g") {
		t.Error("a refusal made on shares older than the queues' specs denies the gang")
	}
	sharesQueues = queues // the shares now include the flip
	m.attempt("ns/g", sharesQueues)
	m.deny("ns/g", time.Minute)
	if !m.isDenied("ns/g") {
		t.Error("a refusal made on shares that include every spec change does not deny the gang")
	}
	m.forgetGang("ns/g")
	if m.isDenied("ns/g") {
		t.Error("the denial of a gang whose PodGroup is gone still holds")
	}
}

// The failure report's event broadcaster ends with the plugin's context: a scheduler stopped (or one
// started per scheduler_perf workload) leaves no goroutine of it behind.
func TestFailureReportLeavesNoGoroutineWhenStopped(t *testing.T) {
	before := goleak.IgnoreCurrent()
	ctx, cancel := context.WithCancel(context.Background())
	r := newFailureReport(ctx, fake.NewSimpleClientset(), kubefake.NewClientset().CoreV1(), nil, clock.RealClock{})
	done := make(chan struct{})
	go func() { r.run(ctx); close(done) }()
	cancel()
	<-done
	goleak.VerifyNone(t, before)
}
