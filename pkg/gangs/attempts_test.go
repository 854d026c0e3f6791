package gangs

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// An attempt holds its gang back while its victims remain, and is replaced by the gang's next attempt.
func TestAttemptsHoldTheGang(t *testing.T) {
	a := NewAttempts(clock.RealClock{})
	victim := util.MakePod("ns", "victim").UID("victim").Obj()
	nominated := map[types.UID]string{"m-0": "node-a", "m-1": "node-b"}
	expired := 0
	at := a.Begin("ns/g", nominated, []*v1.Pod{victim}, func(*Attempt) { expired++ })

	gone := map[types.UID]bool{}
	held := func(p *v1.Pod) bool { return !gone[p.UID] }
	node, why, ok := a.UnderWay("ns/g", "m-1", held)
	if !ok || node != "node-b" || why == "" {
		t.Fatalf("while the victim stays: underWay = %q, %q, %t; want node-b and a reason", node, why, ok)
	}
	gone["victim"] = true
	if _, _, ok := a.UnderWay("ns/g", "m-1", held); ok {
		t.Error("the gang still held back once its victims are gone")
	}
	next := a.Begin("ns/g", nominated, nil, func(*Attempt) {})
	if a.End(at) {
		t.Error("an attempt replaced by the gang's next one ended as current")
	}
	if !a.End(next) || expired != 0 {
		t.Errorf("the current attempt did not end, or an attempt expired early (%d)", expired)
	}
}

// An attempt expires on the clock, once its victims' longest grace period and AttemptSlack have
// passed, and not a moment before; a replaced attempt does not expire.
func TestAttemptExpiresOnTheClock(t *testing.T) {
	start := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	fake := testingclock.NewFakeClock(start)
	a := NewAttempts(fake)
	victim := util.MakePod("ns", "victim").UID("victim").Obj()
	grace := int64(20)
	victim.Spec.TerminationGracePeriodSeconds = &grace
	expired := make(chan string, 2)
	at := a.Begin("ns/g", nil, []*v1.Pod{victim}, func(at *Attempt) { expired <- at.Key })
	if want := start.Add(20*time.Second + AttemptSlack); !at.Deadline.Equal(want) {
		t.Errorf("deadline %v, want %v", at.Deadline, want)
	}
	fake.Step(20*time.Second + AttemptSlack - time.Nanosecond)
	if !a.Reclaiming("ns/g") {
		t.Error("not reclaiming before the deadline")
	}
	select {
	case key := <-expired:
		t.Fatalf("%s expired before its deadline", key)
	default:
	}
	fake.Step(time.Nanosecond)
	if key := <-expired; key != "ns/g" {
		t.Errorf("expired %q", key)
	}
	if a.Reclaiming("ns/g") || a.Reclaiming("ns/other") {
		t.Error("reclaiming once expired, or a gang that never began")
	}
	replaced := a.Begin("ns/h", nil, nil, func(at *Attempt) { expired <- at.Key })
	a.Begin("ns/h", nil, nil, func(*Attempt) {})
	fake.Step(AttemptSlack)
	if a.End(replaced) {
		t.Error("a replaced attempt is still current")
	}
	select {
	case key := <-expired:
		t.Errorf("replaced attempt of %s expired", key)
	default:
	}
}

// A gang reclaims from when its attempt begins until the attempt ends or comes due on the clock.
func TestReclaimingUntilEndedOrDue(t *testing.T) {
	fake := testingclock.NewFakeClock(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC))
	a := NewAttempts(fake)
	if a.Reclaiming("ns/g") {
		t.Fatal("a gang nobody recorded is reclaiming")
	}
	long := util.MakePod("ns", "long").UID("long").Obj()
	grace := int64(3600)
	long.Spec.TerminationGracePeriodSeconds = &grace
	g := a.Begin("ns/g", nil, []*v1.Pod{long}, func(*Attempt) {})
	a.Begin("ns/due", nil, nil, func(*Attempt) {})
	if !a.Reclaiming("ns/due") {
		t.Error("ns/due not reclaiming before it is due")
	}
	fake.SetTime(fake.Now().Add(AttemptSlack))
	if !a.Reclaiming("ns/g") || a.Reclaiming("ns/due") || a.Reclaiming("ns/other") {
		t.Error("want only ns/g reclaiming: recorded and not due")
	}
	a.End(g)
	if a.Reclaiming("ns/g") {
		t.Error("ns/g still reclaiming once over")
	}
}

// noTimers is a clock whose delayed calls never run: what Reclaiming says past an attempt's deadline
// then rests on its own reading of the clock, not on the expiry having run.
type noTimers struct{ *testingclock.FakeClock }

func (noTimers) AfterFunc(time.Duration, func()) clock.Timer { return nil }

// Past its deadline an attempt is not reclaiming, even before its expiry has run.
func TestReclaimingEndsAtTheDeadline(t *testing.T) {
	start := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	passive := testingclock.NewFakeClock(start)
	a := NewAttempts(noTimers{passive})
	a.Begin("ns/g", nil, nil, func(*Attempt) { t.Error("expired by a clock that runs nothing") })
	passive.SetTime(start.Add(AttemptSlack - time.Nanosecond))
	if !a.Reclaiming("ns/g") {
		t.Error("not reclaiming before the deadline")
	}
	passive.SetTime(start.Add(AttemptSlack))
	if a.Reclaiming("ns/g") {
		t.Error("reclaiming at the deadline though the expiry has not run")
	}
}
