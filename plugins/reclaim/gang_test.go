package reclaim

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// gangMember is member i of the owner's PodGroup g, of 1 CPU.
func gangMember(name string) *v1.Pod {
	return util.MakePod("ns", name).UID(name).Label(schedulingv1beta1.PodGroupLabel, "g").
		Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()
}

// A gang whose members the informer's store holds before the accounting counted them all is judged
// on shares that count every one: until they do, it waits for the shares (keeping what it reserved,
// and denied nothing), and it is let in once they do. Judged on shares that miss a member, its queue
// would deserve too little, and the gang would be refused with numbers that never held.
func TestAGangWaitsForSharesThatCountEveryMember(t *testing.T) {
	f := newNodeFixture(t, nil)
	r := f.reclaim
	handle := &activations{Handle: f.framework}
	r.handle = handle
	r.acct.OnSharesComputed(r.activateWaiting) // as New wires it
	pg := util.MakePodGroup("ns", "g").MinMember(2).Queue("owner").Obj()
	if _, err := r.acct.Client.SchedulingV1beta1().PodGroups("ns").Create(f.ctx, pg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	first, second := gangMember("g-0"), gangMember("g-1")
	createPod(t, f, first)
	waitFor(t, f.ctx, "shares that count the first member", func() bool {
		return r.acct.SharesInclude(first) && !r.acct.Snapshot().Stale()
	})
	// The second member is in the informer's store, where the gang's members are read, and not yet
	// handed to the accounting's handler.
	if err := f.informers.Core().V1().Pods().Informer().GetIndexer().Add(second); err != nil {
		t.Fatal(err)
	}
	g := r.gangOf(first)
	if g == nil || len(g.missing) != 2 {
		t.Fatalf("gang of %s: %+v; want both members missing", first.Name, g)
	}
	judged := r.acct.Snapshot()
	_, status := r.postFilterGang(f.ctx, framework.NewCycleState(), first, unschedulableOnN(), g)
	if status.Code() != fwk.UnschedulableAndUnresolvable || status.Message() != "reclaim: waiting for the fair shares to include the latest demand" {
		t.Fatalf("PostFilter on shares that miss a member: %v; want the gang to wait for the shares", status)
	}
	if got := handle.activated(); len(got) != 0 {
		t.Fatalf("activated %v while the shares miss a member; want the gang to wait for them", got)
	}
	if _, err := f.client.CoreV1().Pods("ns").Create(f.ctx, second, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, f.ctx, "the gang let in on shares that count its second member", func() bool { return slices.Contains(handle.activated(), first.Name) })
	// The members are judged against the snapshot the plan reads, not the shares published since.
	if allCounted(g.missing, func(m *v1.Pod) bool { return r.acct.SnapshotIncludes(judged, m) }) {
		t.Errorf("the snapshot read before %s was counted includes it", second.Name)
	}
	waitFor(t, f.ctx, "a snapshot that counts both members", func() bool {
		return allCounted(g.missing, func(m *v1.Pod) bool { return r.acct.SnapshotIncludes(r.acct.Snapshot(), m) })
	})
}
