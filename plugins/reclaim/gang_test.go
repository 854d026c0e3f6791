package reclaim

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	quota "k8s.io/apiserver/pkg/quota/v1"
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
// on shares that count every one: reclaim counts the missing members on sight before it takes the
// snapshot. Judged on shares that miss a member, its queue would deserve too little, and the gang
// would be refused with numbers that never held.
func TestAGangIsJudgedOnSharesThatCountEveryMember(t *testing.T) {
	f := newNodeFixture(t, nil)
	r := f.reclaim
	pg := util.MakePodGroup("ns", "g").MinMember(2).Queue("owner").Obj()
	if _, err := r.acct.Client.SchedulingV1beta1().PodGroups("ns").Create(f.ctx, pg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	first, second := gangMember("g-0"), gangMember("g-1")
	createPod(t, f, first)
	waitFor(t, f.ctx, "the first member counted", func() bool { return r.acct.Pods.Usage("owner").Pods == 1 })
	// The second member is in the informer's store, where the gang's members are read, and not yet
	// handed to the accounting's handler.
	if err := f.informers.Core().V1().Pods().Informer().GetIndexer().Add(second); err != nil {
		t.Fatal(err)
	}
	g := r.gangOf(first)
	if g == nil || len(g.missing) != 2 {
		t.Fatalf("gang of %s: %+v; want both members missing", first.Name, g)
	}
	r.postFilterGang(f.ctx, framework.NewCycleState(), first, unschedulableOnN(), g)
	if q := r.acct.Snapshot().Queue("owner"); r.acct.Pods.Usage("owner").Pods != 2 || !quota.Equals(q.Pending, cpu("2")) {
		t.Errorf("after PostFilter: owner counts %d pods asking for %v; want both members, 2 cpu", r.acct.Pods.Usage("owner").Pods, q.Pending)
	}
}
