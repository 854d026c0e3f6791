package reclaim

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// An attempt holds its gang back while its victims remain, and is replaced by the gang's next attempt.
func TestAttemptsHoldTheGang(t *testing.T) {
	a := newAttempts()
	victim := util.MakePod("ns", "victim").UID("victim").Obj()
	nominated := map[types.UID]string{"m-0": "node-a", "m-1": "node-b"}
	expired := 0
	at := a.begin("ns/g", nominated, []*v1.Pod{victim}, func(*attempt) { expired++ })

	gone := map[types.UID]bool{}
	held := func(p *v1.Pod) bool { return !gone[p.UID] }
	node, why, ok := a.underWay("ns/g", "m-1", held)
	if !ok || node != "node-b" || why == "" {
		t.Fatalf("while the victim stays: underWay = %q, %q, %t; want node-b and a reason", node, why, ok)
	}
	gone["victim"] = true
	if _, _, ok := a.underWay("ns/g", "m-1", held); ok {
		t.Error("the gang still held back once its victims are gone")
	}
	next := a.begin("ns/g", nominated, nil, func(*attempt) {})
	if a.end(at) {
		t.Error("an attempt replaced by the gang's next one ended as current")
	}
	if !a.end(next) || expired != 0 {
		t.Errorf("the current attempt did not end, or an attempt expired early (%d)", expired)
	}
}
