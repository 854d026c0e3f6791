package accounting

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	quota "k8s.io/apiserver/pkg/quota/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// TestReadersLeavePublishedListsAlone: the usage, shares and capacity lists are handed to readers
// without a copy, on the promise that they are replaced, never changed in place. Admission, the
// headroom, the share checks and a computation of the shares read them all; afterwards every list
// holds what it held. The memory quantities are too large for an int64 and so are held as decimals,
// which a copy of a Quantity shares: changing such a copy would change the list.
func TestReadersLeavePublishedListsAlone(t *testing.T) {
	huge := resource.MustParse("20000000000000000000") // 2e19 bytes: beyond int64
	node := util.MakeNode("n", "10", "10Gi")
	node.Status.Allocatable[v1.ResourceMemory], node.Status.Capacity[v1.ResourceMemory] = huge, huge
	withMemory := func(queue, name, cpu, memory, node string) *v1.Pod {
		p := util.MakePod("ns", name).Label(schedulingv1beta1.QueueLabel, queue).UID(name).
			Req(map[v1.ResourceName]string{v1.ResourceCPU: cpu, v1.ResourceMemory: memory}).Obj()
		p.Spec.NodeName = node
		return p
	}
	// a holds more memory than its share: the computation works out what it holds above it.
	bound := withMemory("a", "bound", "6", "15000000000000000000", "n")
	pending := withMemory("b", "pending", "3", "10000000000000000000", "")
	a := newTestAccounting(t, []runtime.Object{util.MakeQueue("root").Obj(), util.MakeQueue("a").Obj(),
		util.MakeQueue("b").Capability(map[v1.ResourceName]string{v1.ResourceCPU: "8"}).Obj()}, node, bound, pending)
	before := publishedLists(a)
	if len(before) == 0 {
		t.Fatal("nothing published")
	}
	req := resourcehelper.PodRequests(pending, resourcehelper.PodResourcesOptions{})
	for _, queue := range []string{"a", "b"} {
		a.AdmitPod(a.Snapshot(), pending, queue, req)
		a.AdmitUnit(queue, req, nil, nil)
		a.HeadroomOf(a.Snapshot(), queue, a.PodWork(pending), req)
		a.UnderShare(queue, req)
		a.DominantShare(queue)
		a.ReclaimableSpare("")
	}
	compute(a)
	after := publishedLists(a)
	for name, list := range before {
		if !quota.Equals(list, after[name]) {
			t.Errorf("%s changed by its readers: %v, now %v", name, list, after[name])
		}
	}
}

// publishedLists copies every list the accounting hands out without copying, by name.
func publishedLists(a *Accounting) map[string]v1.ResourceList {
	snap := a.Snapshot()
	out := map[string]v1.ResourceList{"capacity": a.shares.capacityOf.get().DeepCopy(), "claimable": snap.Claimable.DeepCopy()}
	for name, s := range snap.Spare {
		out["spare/"+name] = s.DeepCopy()
	}
	a.Pods.mu.RLock()
	out["allocated"], out["pending"] = a.Pods.allocated.DeepCopy(), a.Pods.pending.DeepCopy()
	for name, q := range a.Pods.queues {
		out["allocated/"+name], out["pending/"+name] = q.Allocated.DeepCopy(), q.Pending.DeepCopy()
	}
	a.Pods.mu.RUnlock()
	a.shares.mu.RLock()
	defer a.shares.mu.RUnlock()
	for name, d := range a.shares.leafDemand {
		out["demand/"+name] = d.DeepCopy()
	}
	for name, d := range a.shares.deserved {
		if name != schedulingv1beta1.RootQueue { // the root's is the capacity itself
			out["deserved/"+name] = d.DeepCopy()
		}
	}
	return out
}
