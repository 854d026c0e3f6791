package gang

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingapi "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	schedcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/queue-scheduler/queue-scheduler/apis/config"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting/accountingtest"
	"github.com/queue-scheduler/queue-scheduler/pkg/podindex"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// noWaitingPods is a framework handle with no pod waiting at Permit, whose scheduling snapshot is
// snapshot (an empty one when nil).
type noWaitingPods struct {
	fwk.Handle
	snapshot *schedcache.Snapshot
}

func (h noWaitingPods) SnapshotSharedLister() fwk.SharedLister {
	if h.snapshot == nil {
		return schedcache.NewSnapshot(nil, nil)
	}
	return h.snapshot
}

func (noWaitingPods) IterateOverWaitingPods(func(fwk.WaitingPod)) {}

// A native gang the pod-group cycle could not place is denied and reported; one whose cycle's
// snapshot still holds a pod the informer saw leave is left to come back when the scheduler's cache
// hears of the pod.
func TestPodGroupPostFilter(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	acct, _ := accountingtest.Start(ctx, t, kubefake.NewClientset(), util.MakeQueue("q").Obj(), util.MakePodGroup("ns", "g").MinMember(2).Queue("q").Obj())
	pods := []*v1.Pod{member("g", "g-0", 0, ""), member("g", "g-1", 0, "")}
	args, err := config.DecodeGang(nil)
	if err != nil {
		t.Fatal(err)
	}
	gone := member("other", "gone", 0, "n")
	handle := &noWaitingPods{snapshot: schedcache.NewSnapshot([]*v1.Pod{gone}, []*v1.Node{util.MakeNode("n", "4", "8Gi")})}
	g := &Gang{handle: handle, acct: acct, held: podindex.New(), clock: clock.RealClock{}, args: args, freed: newFreedRoom(clock.RealClock{}),
		members:  newMembers(func(string) []*v1.Pod { return pods }, noneHeld, func() int64 { return 0 }, clock.RealClock{}),
		failures: newFailureReport(ctx, acct.Client, kubefake.NewClientset().CoreV1(), acct.Store.PodGroups(), acct.Clock())}
	native := &schedulingapi.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "g"}}
	info := &framework.PodGroupInfo{Namespace: "ns", Name: "g", PodGroup: native, UnscheduledPods: pods}

	g.freed.podGone(gone)
	if _, s := g.PodGroupPostFilter(ctx, framework.NewCycleState(), info, nil); s.IsSuccess() || !strings.Contains(s.Message(), "pod-group cycle could not place") ||
		g.members.isDenied("ns/g") {
		t.Errorf("a group whose snapshot still holds a pod gone: status %v %q, denied %t; want Unschedulable, not denied", s.Code(), s.Message(), g.members.isDenied("ns/g"))
	}

	handle.snapshot = schedcache.NewSnapshot(nil, []*v1.Node{util.MakeNode("n", "4", "8Gi")})
	_, s := g.PodGroupPostFilter(ctx, framework.NewCycleState(), info, nil)
	if s.IsSuccess() || !g.members.isDenied("ns/g") {
		t.Fatalf("a group the cycle could not place: status %v %q, denied %t; want Unschedulable and denied", s.Code(), s.Message(), g.members.isDenied("ns/g"))
	}
	if got := g.failures.latest[types.NamespacedName{Namespace: "ns", Name: "g"}]; !strings.Contains(got, "pod-group cycle could not place its 2 unscheduled members") {
		t.Errorf("reported %q", got)
	}
}

// activations is a framework handle that hands on the pods it is asked to activate.
type activations struct {
	fwk.Handle
	pods chan string
}

func (a *activations) Activate(_ klog.Logger, pods map[string]*v1.Pod) {
	for name := range pods {
		a.pods <- name
	}
}

// A denied gang's members, held at PreFilter, come back when the args' backoff has passed on the
// plugin's clock, and not before: the test moves the clock, and sleeps nowhere.
func TestDenialLapsesOnTheClock(t *testing.T) {
	fake := clocktesting.NewFakeClock(time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC))
	handle := &activations{pods: make(chan string, 1)}
	args, err := config.DecodeGang(&runtime.Unknown{Raw: []byte(`{"podGroupBackoffSeconds": 30}`)})
	if err != nil {
		t.Fatal(err)
	}
	g := &Gang{handle: handle, clock: fake, held: podindex.New(), args: args,
		members: newMembers(func(string) []*v1.Pod { return nil }, noneHeld, func() int64 { return 0 }, fake)}
	g.deny("ns/g")
	g.held.Add(member("g", "g-0", 0, ""), deniedBucket("ns/g"))
	fake.Step(30*time.Second - time.Millisecond)
	if !g.members.isDenied("ns/g") || !fake.HasWaiters() {
		t.Fatalf("before the window passed: denied %t, its timer waiting %t; want both", g.members.isDenied("ns/g"), fake.HasWaiters())
	}
	fake.Step(time.Millisecond)
	if g.members.isDenied("ns/g") {
		t.Error("the denial holds once its window passed")
	}
	wantActivated(t, handle, "g-0", "once the window passed")
}

// wantActivated waits for the handle to be asked to activate pod name of namespace ns, when.
func wantActivated(t *testing.T, handle *activations, name, when string) {
	t.Helper()
	select {
	case got := <-handle.pods:
		if got != "ns/"+name && got != name {
			t.Errorf("activated %q %s; want %s", got, when, name)
		}
	case <-time.After(wait.ForeverTestTimeout):
		t.Errorf("%s was not activated %s", name, when)
	}
}
