package gang

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/utils/clock"

	"github.com/queue-scheduler/queue-scheduler/apis/config"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting/accountingtest"
	"github.com/queue-scheduler/queue-scheduler/pkg/holdreport"
	"github.com/queue-scheduler/queue-scheduler/pkg/podindex"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// informerHandle is a framework handle that serves the informers and hands on the pods it is asked
// to activate.
type informerHandle struct {
	activations
	factory informers.SharedInformerFactory
}

func (h *informerHandle) SharedInformerFactory() informers.SharedInformerFactory { return h.factory }

// watchedGang is a Gang following the informers of kube, as New wires it, with gang ns/g of two
// members in queue q.
func watchedGang(t *testing.T, ctx context.Context, kube *kubefake.Clientset) (*Gang, *informerHandle) {
	t.Helper()
	acct, factory := accountingtest.Start(ctx, t, kube, util.MakeQueue("q").Obj(), util.MakePodGroup("ns", "g").MinMember(2).Queue("q").Obj())
	// A denial that outlasts the test: only room freed lifts it.
	args, err := config.DecodeGang(&runtime.Unknown{Raw: []byte(`{"podGroupBackoffSeconds": 3600}`)})
	if err != nil {
		t.Fatal(err)
	}
	handle := &informerHandle{activations: activations{pods: make(chan string, 10)}, factory: factory}
	g := &Gang{handle: handle, acct: acct, args: args, clock: clock.RealClock{}, held: podindex.New(), freed: newFreedRoom(clock.RealClock{}),
		members:  newMembers(acct.Gangs.Members, acct.Pods.Holds, func() int64 { return acct.Snapshot().QueueSpecs }, clock.RealClock{}),
		reporter: holdreport.New(kube, factory.Core().V1().Pods().Lister(), events.NewFakeRecorder(10), clock.RealClock{}),
		pods:     factory.Core().V1().Pods().Lister()}
	if err := g.watch(factory.Core().V1().Pods().Informer()); err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return g, handle
}

// A gang deleted and made again under its name finds the pods of the one before on its nodes: when
// they go, the room they free lets the new gang in, as room freed by any other pod does, both for the
// members its denial holds and for those the scheduling queue holds (the hint). Only a sibling still
// there, whose reservation the scheduler gave up, frees nothing for its own gang.
func TestAGangIsLetInByTheRoomItsOwnNameFrees(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	earlier := member("g", "g-earlier", 0, "n")
	pending, sibling := member("g", "g-0", 0, ""), member("g", "g-1", 0, "")
	other := member("other", "other-0", 0, "n")
	kube := kubefake.NewClientset(earlier, sibling, other)
	g, handle := watchedGang(t, ctx, kube)
	// A pod created now and seen says the informers watch, before the test deletes a pod.
	if _, err := kube.CoreV1().Pods("ns").Create(ctx, pending, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
		return len(g.acct.Gangs.Members("ns/g")) == 3, nil
	}); err != nil {
		t.Fatalf("the informers never saw %s", pending.Name)
	}

	for _, tt := range []struct {
		name    string
		deleted *v1.Pod
		want    fwk.QueueingHint
	}{
		{"a sibling still there", sibling, fwk.QueueSkip},
		{"a pod of another gang", other, fwk.Queue},
	} {
		if got, err := g.isSchedulableAfterPodDelete(klog.Background(), pending, tt.deleted, nil); err != nil || got != tt.want {
			t.Errorf("%s left: hint %v (%v), want %v", tt.name, got, err, tt.want)
		}
	}

	g.deny("ns/g")
	g.held.Add(pending, deniedBucket("ns/g"))
	if err := kube.CoreV1().Pods("ns").Delete(ctx, earlier.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	wantActivated(t, &handle.activations, pending.Name, "when the pod of the gang before it left")
	if g.members.isDenied("ns/g") {
		t.Error("the gang is still denied after the pod of the gang before it left")
	}
	if got, err := g.isSchedulableAfterPodDelete(klog.Background(), pending, earlier, nil); err != nil || got != fwk.Queue {
		t.Errorf("the pod of the gang before it left: hint %v (%v), want Queue", got, err)
	}
}

// A gang denied on the snapshot of some queue specs comes back once the shares are computed on new
// ones (recheckHeld, on Events.SharesComputed): a borrower turned reclaimable, a new capability, may
// let it in, and the scheduler's own event of the change may have come before the snapshots held it.
func TestADeniedGangComesBackOnNewQueueSpecs(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kube := kubefake.NewClientset()
	g, handle := watchedGang(t, ctx, kube)
	pending := member("g", "g-0", 0, "")
	g.recheckedSpecs.Store(g.acct.Snapshot().QueueSpecs)
	g.deny("ns/g")
	g.held.Add(pending, deniedBucket("ns/g"))
	g.recheckHeld()
	select {
	case got := <-handle.pods:
		t.Fatalf("activated %s on the specs the gang was denied on", got)
	default:
	}
	raised := util.MakeQueue("q").Obj()
	raised.Generation = 2
	raised.Spec.Weight = 2
	if _, err := g.acct.Client.SchedulingV1beta1().Queues().Update(ctx, raised, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	before := g.recheckedSpecs.Load()
	if err := wait.PollUntilContextTimeout(ctx, time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
		return g.acct.Snapshot().QueueSpecs != before, nil
	}); err != nil {
		t.Fatal("the snapshots never rested on the new spec")
	}
	g.recheckHeld() // as the shares' computation tells it
	wantActivated(t, &handle.activations, pending.Name, "once the shares rest on the new spec")
	if g.members.isDenied("ns/g") {
		t.Error("the gang is still denied on the new specs")
	}
}
