package accounting

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	quota "k8s.io/apiserver/pkg/quota/v1"
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
		a.Pods.mu.RLock()
		defer a.Pods.mu.RUnlock()
		return len(a.Pods.pods) == pods && a.sharesInformed(), nil
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
	if got := a.Admit("a", "", cpu("7")); got == nil {
		t.Errorf("borrowing 7 CPUs with 6 idle: got admitted, want refused on the share")
	}
	// b asks for 6: the next snapshot's shares give them to it at once, with no computation to wait
	// for, and nothing idle is left to borrow.
	a.Pods.upsert(pod("b", "b-0", "6", ""))
	if got := a.Admit("a", "", cpu("1")); got == nil || !strings.Contains(got.Message, "no idle cpu is left to borrow") {
		t.Errorf("borrowing once b asks for the idle CPUs: got %+v, want refused on the share", got)
	}
}

// A pod the scheduler sees before the accounting's handler does is counted on sight, as the
// informer's store holds it: the snapshot taken after it has the pod in its queue's demand and
// shares. A pod the store no longer holds is not counted, nor one of another scheduler; one counted
// already is left as it is.
func TestPodsAreCountedOnSight(t *testing.T) {
	queues := []runtime.Object{util.MakeQueue("root").Obj(), util.MakeQueue("a").Obj(), util.MakeQueue("b").Obj()}
	// On 10 CPUs, a holds 4 and asks for 3 more, b asks for 2: each deserves its demand, a 7.
	kube := []runtime.Object{util.MakeNode("n", "10", "10Gi"), pod("b", "b-pending", "2", "")}
	for i := range 4 {
		kube = append(kube, pod("a", fmt.Sprint("a-bound-", i), "1", "n"))
	}
	for i := range 3 {
		kube = append(kube, pod("a", fmt.Sprint("a-pending-", i), "1", ""))
	}
	a := newTestAccounting(t, queues, kube...)
	store := a.Pods.live
	seen, gone, others := pod("a", "a-new", "2", ""), pod("a", "a-gone", "2", ""), pod("a", "another-schedulers", "2", "")
	others.Spec.SchedulerName = v1.DefaultSchedulerName
	// In the store, not yet handled: the handlers of the pod informer run after the store holds it.
	for _, p := range []*v1.Pod{seen, others} {
		if err := store.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	a.Pods.Count(seen)
	a.Pods.Count(gone)
	a.Pods.Count(others) // no queue counts it, and no handler would ever let it go
	snap := a.Snapshot()
	if q := snap.Queue("a"); !quota.Equals(q.Pending, cpu("5")) || q.Deserved.Cpu().Cmp(resource.MustParse("8")) != 0 {
		t.Errorf("a pod counted on sight: a asks for %v and deserves %v, want 5 and 8", q.Pending, q.Deserved)
	}
	if got := a.AdmitPod(snap, seen, "a", cpu("2")); got != nil {
		t.Errorf("the pod counted on sight, its queue below its share: got %q, want admitted", got.Message)
	}
	a.Pods.Count(seen)
	if again := a.Snapshot(); again != snap {
		t.Error("counting a pod counted already changed the snapshot")
	}
}

func message(r *Refusal) string {
	if r == nil {
		return ""
	}
	return r.Message
}

func allocatedCPU(a *Accounting, queue string) string {
	allocated := a.Pods.Usage(queue).Allocated
	return allocated.Cpu().String()
}

// compute computes the shares now: a change that can move them numbered, and a snapshot built on it.
func compute(a *Accounting) {
	a.shares.numberedChange(true)
	a.Snapshot()
}
