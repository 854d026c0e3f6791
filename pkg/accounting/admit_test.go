package accounting

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned/fake"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// newTestAccounting runs an accounting on fake clients holding the given queues, nodes and pods, and
// waits until it counts every pod.
func newTestAccounting(t testing.TB, queues []runtime.Object, kubeObjs ...runtime.Object) *Accounting {
	t.Helper()
	return newTestAccountingWith(t, Config{}, queues, kubeObjs...)
}

// newTestAccountingWith is newTestAccounting with the configuration cfg.
func newTestAccountingWith(t testing.TB, cfg Config, queues []runtime.Object, kubeObjs ...runtime.Object) *Accounting {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	kube := informers.NewSharedInformerFactory(kubefake.NewClientset(kubeObjs...), 0)
	a, err := Start(ctx, fake.NewSimpleClientset(queues...), kube, cfg)
	if err != nil {
		t.Fatal(err)
	}
	kube.Start(ctx.Done())
	kube.WaitForCacheSync(ctx.Done())
	pods := 0
	for _, o := range kubeObjs {
		if _, ok := o.(*v1.Pod); ok {
			pods++
		}
	}
	err = wait.PollUntilContextTimeout(ctx, time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		a.usage.mu.RLock()
		defer a.usage.mu.RUnlock()
		return len(a.usage.pods) == pods && a.sharesInformed(), nil
	})
	if err != nil {
		t.Fatal("pods never counted")
	}
	// Synced, the accounting's usage history starts at the next computation.
	err = wait.PollUntilContextTimeout(ctx, time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return a.Synced(), nil
	})
	if err != nil {
		t.Fatal("the accounting never synced")
	}
	// An informer's event delivered after a computation makes the shares stale again: compute until
	// they include every change.
	err = wait.PollUntilContextTimeout(ctx, time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		a.recomputeShares()
		return !a.Snapshot().Stale(), nil
	})
	if err != nil {
		t.Fatal("the shares never included every change")
	}
	return a
}

func pod(queue, name, cpu, node string) *v1.Pod {
	p := util.MakePod("ns", name).Label(schedulingv1beta1.QueueLabel, queue).UID(name).
		Req(map[v1.ResourceName]string{v1.ResourceCPU: cpu}).Obj()
	p.Spec.NodeName = node
	return p
}

func cpu(q string) v1.ResourceList {
	return util.ResourceList(map[v1.ResourceName]string{v1.ResourceCPU: q})
}

func TestAdmit(t *testing.T) {
	queues := []runtime.Object{
		util.MakeQueue("root").Obj(),
		util.MakeQueue("capped-parent").Capability(map[v1.ResourceName]string{v1.ResourceCPU: "4"}).Obj(),
		util.MakeQueue("child").Parent("capped-parent").Obj(),
		util.MakeQueue("a").Obj(),
		util.MakeQueue("b").Obj(),
	}
	kube := []runtime.Object{util.MakeNode("n", "10", "10Gi")}
	// On 10 CPUs, a holds 6 and wants 5 more, b holds 1 and wants 4 more, child holds 3 of its
	// parent's 4 and wants 1 more: each deserves 3.33.
	for i := range 6 {
		kube = append(kube, pod("a", fmt.Sprint("a-bound-", i), "1", "n"))
	}
	kube = append(kube, pod("a", "a-pending", "5", ""), pod("b", "b-bound", "1", "n"), pod("b", "b-pending", "4", ""),
		pod("child", "c-bound", "3", "n"), pod("child", "c-pending", "1", ""))
	a := newTestAccounting(t, queues, kube...)
	tests := []struct {
		name, queue, cpu, want string
	}{
		{name: "below its share", queue: "b", cpu: "1"},
		{name: "at its share with nothing idle to borrow", queue: "a", cpu: "1", want: `queue "a" is at its deserved share of cpu`},
		{name: "ancestor's capability", queue: "child", cpu: "2", want: `queue "capped-parent" would exceed its capability of cpu: 3 allocated + 2 requested > 4`},
		{name: "within every capability", queue: "child", cpu: "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := message(a.Admit(tt.queue, "", cpu(tt.cpu)))
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("Admit: got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestAdmitBorrowsIdleCapacity(t *testing.T) {
	queues := []runtime.Object{util.MakeQueue("root").Obj(), util.MakeQueue("a").Obj(), util.MakeQueue("b").Obj()}
	// a holds 4, asks for nothing more: it deserves 4. b holds nothing. 6 of 10 CPUs are idle.
	kube := []runtime.Object{util.MakeNode("n", "10", "10Gi")}
	for i := range 4 {
		kube = append(kube, pod("a", fmt.Sprint("a-", i), "1", "n"))
	}
	a := newTestAccounting(t, queues, kube...)
	if got := a.Admit("a", "", cpu("6")); got != nil {
		t.Errorf("borrowing 6 idle CPUs nobody claims: got %q, want admitted", got.Message)
	}
	if got := a.Admit("a", "", cpu("7")); got == nil || got.WaitsForShares {
		t.Errorf("borrowing 7 CPUs with 6 idle: got %+v, want refused on the share", got)
	}
	makeStale(a)
	if got := a.Admit("a", "", cpu("1")); got == nil || !got.WaitsForShares {
		t.Errorf("borrowing while the shares are stale: got %+v, want a wait for the shares", got)
	}
}

// A pod about to be queued that the shares do not include yet is admitted only if it would be with
// its queue's other pending pods allocated first: they may be scheduled before it. Once the shares
// include it, it is admitted as in scheduling, below its queue's share. Scheduling itself (AdmitPod)
// admits it below its share either way.
func TestQueuedPodWaitsUntilTheSharesIncludeIt(t *testing.T) {
	queues := []runtime.Object{util.MakeQueue("root").Obj(), util.MakeQueue("a").Obj(), util.MakeQueue("b").Obj()}
	// On 10 CPUs, a holds 4 and asks for 3 more, b asks for 10: each deserves 5.
	kube := []runtime.Object{util.MakeNode("n", "10", "10Gi"), pod("b", "b-pending", "10", "")}
	for i := range 4 {
		kube = append(kube, pod("a", fmt.Sprint("a-bound-", i), "1", "n"))
	}
	for i := range 3 {
		kube = append(kube, pod("a", fmt.Sprint("a-pending-", i), "1", ""))
	}
	a := newTestAccounting(t, queues, kube...)
	newest := kube[len(kube)-1].(*v1.Pod)
	if got := a.AdmitQueuedPod(a.Snapshot(), newest, "a", cpu("1")); got != nil {
		t.Errorf("a pod the shares include, its queue below its share: got %q, want admitted", got.Message)
	}
	// The newest pod counted after the shares were computed.
	a.usage.mu.Lock()
	entry := a.usage.pods[newest.UID]
	entry.countedGen = makeStale(a)
	a.usage.pods[newest.UID] = entry
	a.usage.mu.Unlock()
	if got := a.AdmitQueuedPod(a.Snapshot(), newest, "a", cpu("1")); got == nil || !got.WaitsForShares {
		t.Errorf("a pod the shares do not include, its queue's other pending pods taking its share: got %+v, want a wait for the shares", got)
	}
	if got := a.AdmitPod(a.Snapshot(), newest, "a", cpu("1")); got != nil {
		t.Errorf("scheduling a pod below its queue's share: got %q, want admitted", got.Message)
	}
	a.recomputeShares()
	if got := a.AdmitQueuedPod(a.Snapshot(), newest, "a", cpu("1")); got != nil {
		t.Errorf("once the shares include the pod: got %q, want admitted", got.Message)
	}
}

// A pod the shares do not cover yet goes at once while the cluster holds all the demand there is:
// what the queues hold, every pending pod, and what PodGroups and units ask for beyond their pods.
// It waits for the shares once it would not fit beside that demand, or after a change whose demand
// is not kept as it happens (a PodGroup, a node) until the shares include that change.
func TestUncontendedPodsNeedNoFreshShares(t *testing.T) {
	queues := []runtime.Object{util.MakeQueue("root").Obj(), util.MakeQueue("a").Obj(), util.MakeQueue("b").Obj(), util.MakeQueue("c").Obj(),
		util.MakePodGroup("ns", "g").Queue("b").MinResources(map[v1.ResourceName]string{v1.ResourceCPU: "2"}).Obj()}
	// On 20 CPUs: a holds 4 and asks for 3 more, b asks for 10 and its Pending PodGroup for 2 more:
	// 19 of demand; c, new, has none counted.
	kube := []runtime.Object{util.MakeNode("n", "20", "20Gi"), pod("b", "b-pending", "10", "")}
	for i := range 4 {
		kube = append(kube, pod("a", fmt.Sprint("a-bound-", i), "1", "n"))
	}
	for i := range 3 {
		kube = append(kube, pod("a", fmt.Sprint("a-pending-", i), "1", ""))
	}
	a := newTestAccounting(t, queues, kube...)
	fresh := pod("c", "c-0", "1", "")
	if got := a.AdmitQueuedPod(a.Snapshot(), fresh, "c", cpu("1")); got != nil {
		t.Errorf("a pod not counted yet, 1 CPU beside 19 of demand on 20: got %q, want admitted", got.Message)
	}
	if got := a.AdmitPod(a.Snapshot(), fresh, "c", cpu("1")); got != nil {
		t.Errorf("scheduling it: got %q, want admitted", got.Message)
	}
	if got := a.AdmitPod(a.Snapshot(), pod("c", "c-1", "2", ""), "c", cpu("2")); got == nil || !got.WaitsForShares {
		t.Errorf("a pod of 2 CPUs beside 19 of demand on 20: got %+v, want a wait for the shares", got)
	}
	if got := a.Admit("c", "", cpu("1")); got != nil {
		t.Errorf("work that is not a pod, shares current: got %q, want admitted by borrowing", got.Message)
	}
	a.shares.markDirty() // a PodGroup or a node changed: its demand is known once the shares include it
	if got := a.AdmitPod(a.Snapshot(), fresh, "c", cpu("1")); got == nil || !got.WaitsForShares {
		t.Errorf("after a PodGroup's change: got %+v, want a wait for the shares", got)
	}
	a.recomputeShares()
	if got := a.AdmitPod(a.Snapshot(), fresh, "c", cpu("1")); got != nil {
		t.Errorf("once the shares include the change: got %q, want admitted", got.Message)
	}
}

// makeStale marks the shares stale without waking their recomputation, as a change of demand does,
// and returns the change's number.
func makeStale(a *Accounting) uint64 {
	gen := a.shares.dirtyGen.Add(1)
	raiseTo(&a.shares.movedGen, gen)
	return gen
}

func message(r *Refusal) string {
	if r == nil {
		return ""
	}
	return r.Message
}

func allocatedCPU(a *Accounting, queue string) string {
	allocated := a.Usage(queue).Allocated
	return allocated.Cpu().String()
}
