package reclaim

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// An attempt holds its gang back while its victims remain, counts its pending members against their
// queue for the queue's other preemptors, and is replaced by the gang's next attempt.
func TestAttemptsHoldTheGangAndItsRoom(t *testing.T) {
	a := newAttempts()
	victim := util.MakePod("ns", "victim").UID("victim").Obj()
	members := []*v1.Pod{
		util.MakePod("ns", "m-0").UID("m-0").Req(map[v1.ResourceName]string{v1.ResourceCPU: "2"}).Obj(),
		util.MakePod("ns", "m-1").UID("m-1").Req(map[v1.ResourceName]string{v1.ResourceCPU: "2"}).Obj(),
	}
	nominated := map[types.UID]string{"m-0": "node-a", "m-1": "node-b"}
	expired := 0
	at := a.begin("ns/g", "q", members, nominated, []*v1.Pod{victim}, func(*attempt) { expired++ })

	gone := map[types.UID]bool{}
	held := func(p *v1.Pod) bool { return !gone[p.UID] }
	node, why, ok := a.underWay("ns/g", "m-1", held)
	if !ok || node != "node-b" || why == "" {
		t.Fatalf("while the victim stays: underWay = %q, %q, %t; want node-b and a reason", node, why, ok)
	}
	pending := func(p *v1.Pod) bool { return p.Name != "m-0" } // m-0 is bound
	if got := a.holding("q", "", pending); got.Cpu().String() != "2" {
		t.Errorf("room held for the queue's other preemptors: %s, want the 2 CPUs of the member still pending", got.Cpu())
	}
	if got := a.holding("q", "ns/g", pending); len(got) != 0 {
		t.Errorf("the gang's own attempt held against itself: %v", got)
	}
	if got := a.holding("other", "", pending); len(got) != 0 {
		t.Errorf("room held for another queue: %v", got)
	}

	gone["victim"] = true
	if _, _, ok := a.underWay("ns/g", "m-1", held); ok {
		t.Error("the gang still held back once its victims are gone")
	}
	next := a.begin("ns/g", "q", members, nominated, nil, func(*attempt) {})
	if a.end(at) {
		t.Error("an attempt replaced by the gang's next one ended as current")
	}
	if !a.end(next) || expired != 0 {
		t.Errorf("the current attempt did not end, or an attempt expired early (%d)", expired)
	}
}
