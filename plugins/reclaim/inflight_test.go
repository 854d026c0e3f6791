package reclaim

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/queue-scheduler/queue-scheduler/pkg/gangs"
)

// A victim the accounting sees leave stays on its way out for gangs.AttemptSlack: the node snapshot
// of a cycle that began before can still show it as it was, and a second preemptor reading that
// snapshot must see room being freed, not evict again. A victim sent back to the scheduling queue
// holds nothing on the node and is forgotten at once.
func TestVictimsLeftStayGoingForTheSlack(t *testing.T) {
	fake := clocktesting.NewFakeClock(time.Now())
	f := newInflight(fake)
	leaving, released, held := borrowerPod("leaving", 1), borrowerPod("released", 1), borrowerPod("held", 1)
	f.add([]*v1.Pod{leaving, released, held})
	states := map[string]victimState{"leaving": victimLeaving, "released": victimReleased, "held": victimHeld}
	state := func(p *v1.Pod) victimState { return states[p.Name] }
	queueOf := func(*v1.Pod) (string, error) { return "borrower", nil }
	gangOf := func(*v1.Pod) string { return "" }

	_, _, alive := f.pending(state, queueOf, gangOf)
	if got := names(alive); len(got) != 1 || got[0] != "held" {
		t.Errorf("victims still holding their room: %v, want [held]", got)
	}
	for _, tt := range []struct {
		pod  *v1.Pod
		want bool
	}{{leaving, true}, {released, false}, {held, true}} {
		if got := f.evicting(tt.pod.UID); got != tt.want {
			t.Errorf("%s on its way out: %v, want %v", tt.pod.Name, got, tt.want)
		}
	}
	fake.Step(gangs.AttemptSlack - time.Nanosecond)
	if !f.evicting(leaving.UID) {
		t.Error("the victim seen leaving was no longer going before the slack ran out")
	}
	fake.Step(time.Nanosecond)
	if f.evicting(leaving.UID) {
		t.Error("the victim seen leaving was still going once the slack ran out")
	}
	f.pending(state, queueOf, gangOf)
	if len(f.left) != 0 {
		t.Errorf("victims left kept past the slack: %v", f.left)
	}
}
