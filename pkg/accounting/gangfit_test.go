package accounting

import (
	"testing"

	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
)

// A gang's verdict is judged again only when what it rests on changed: its queue, its number of live
// members, its PodGroup's spec, or the queues' specs; a deleted gang's is forgotten.
func TestGangFitsKeepsAVerdictWhileItsBasisStays(t *testing.T) {
	var f gangFits
	judged := 0
	judge := func() *policy.Refusal { judged++; return &policy.Refusal{Message: "never"} }
	on := gangFit{queue: "q", members: 3, specs: 7, generation: 1}
	for range 3 {
		if r := f.verdict("ns/g", on, judge); r == nil || r.Message != "never" {
			t.Fatalf("verdict %v, want the judged one", r)
		}
	}
	if judged != 1 {
		t.Errorf("judged %d times on an unchanged basis, want once", judged)
	}
	for _, changed := range []gangFit{{queue: "other", members: 3, specs: 7, generation: 1}, {queue: "q", members: 4, specs: 7, generation: 1},
		{queue: "q", members: 4, specs: 8, generation: 1}, {queue: "q", members: 4, specs: 8, generation: 2}} {
		before := judged
		f.verdict("ns/g", changed, judge)
		if judged != before+1 {
			t.Errorf("basis %+v: not judged again", changed)
		}
	}
	f.forget("ns/g")
	if len(f.known) != 0 {
		t.Errorf("kept after forget: %v", f.known)
	}
}
