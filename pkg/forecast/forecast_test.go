package forecast

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
)

var (
	now  = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	dims = []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourcePods}
)

func cpu(n int64) Vector { return Vector{n * 1000, 0, 1} }

// node is a node of cpus CPUs running pods of queue, each of 1 CPU, ending at the offsets given at
// the median and twice as late at the 90th percentile (0: never).
func node(name string, cpus int64, queue string, ends ...time.Duration) Node {
	n := Node{Name: name, Free: Vector{cpus * 1000, 1 << 40, 110}}
	for _, e := range ends {
		r := Running{Queue: queue, Requests: cpu(1)}
		if e > 0 {
			r.Ends = Ends{P50: now.Add(e), P90: now.Add(2 * e)}
		}
		n.Running = append(n.Running, r)
		n.Free.Add(cpu(1), -1)
	}
	return n
}

func queue(name string, capability string) Queue {
	q := Queue{Name: name, Parent: "root", Weight: 1, Reclaimable: true}
	if capability != "" {
		q.Capability = v1.ResourceList{v1.ResourceCPU: resource.MustParse(capability)}
	}
	return q
}

func work(key, queue string, age time.Duration, runtime time.Duration, members ...Vector) Work {
	w := Work{Key: key, Queue: queue, Place: policy.Place{Since: now.Add(-age), Name: key}, Runtime: Runtime{P50: runtime, P90: 2 * runtime}}
	for _, m := range members {
		w.Members = append(w.Members, Member{Requests: m})
	}
	return w
}

func snapshot(nodes []Node, queues []Queue, pending ...Work) *Snapshot {
	return &Snapshot{Now: now, Dims: dims, Nodes: nodes, Queues: append([]Queue{{Name: "root"}}, queues...), Pending: pending}
}

func settings() Settings {
	return Settings{Horizon: 24 * time.Hour, Resolution: time.Second, DefaultRuntime: Runtime{P50: time.Hour, P90: 2 * time.Hour}}
}

func want(t *testing.T, got map[string]Start, key string, p50, p90 time.Duration) {
	t.Helper()
	s := got[key]
	if !s.P50.Equal(now.Add(p50)) || !s.P90.Equal(now.Add(p90)) {
		t.Errorf("%s starts %v / %v, want %v / %v", key, s.P50.Sub(now), s.P90.Sub(now), p50, p90)
	}
}

// Work starts in the scheduler's order as the running pods' ends free room: each run takes its
// runtime, at the median and at the 90th percentile.
func TestWorkStartsAsRoomFrees(t *testing.T) {
	// 4 CPUs, all held until 10m (20m at p90); then a 2-CPU job of 5m, then a 4-CPU one.
	s := snapshot([]Node{node("a", 4, "q", 10*time.Minute, 10*time.Minute, 10*time.Minute, 10*time.Minute)}, []Queue{queue("q", "")},
		work("first", "q", 2*time.Minute, 5*time.Minute, cpu(2)), work("second", "q", time.Minute, time.Minute, cpu(4)))
	got := Predict(s, settings())
	want(t, got, "first", 10*time.Minute, 20*time.Minute)
	want(t, got, "second", 15*time.Minute, 30*time.Minute)
}

// Runs that end apart within one step leave one at a time, as the scheduler sees them end: the
// room of each goes to the first pod it fits, at its end, so a 2-CPU pod first in line does not
// take the room of two 1-CPU pods that end seconds apart; the 1-CPU pods behind it do, and it
// waits for them.
func TestRoomFreedApartGoesToWhatFitsEach(t *testing.T) {
	s := snapshot([]Node{node("a", 2, "q", 10*time.Minute+time.Second, 10*time.Minute+3*time.Second)}, []Queue{queue("q", "")},
		work("large", "q", 3*time.Minute, time.Minute, cpu(2)), work("small-1", "q", 2*time.Minute, 5*time.Minute, cpu(1)),
		work("small-2", "q", time.Minute, 5*time.Minute, cpu(1)))
	set := settings()
	set.Resolution = 10 * time.Second
	got := Predict(s, set)
	for key, start := range map[string]time.Duration{"small-1": 10*time.Minute + time.Second, "small-2": 10*time.Minute + 3*time.Second} {
		if p50 := got[key].P50.Sub(now); p50 != start {
			t.Errorf("%s starts at %v, want %v", key, p50, start)
		}
	}
	if p50 := got["large"].P50.Sub(now); p50 != 15*time.Minute+3*time.Second {
		t.Errorf("large starts at %v, want 15m3s, once both small pods ended", p50)
	}
}

// Work let in by a run's end starts at that end, not at the step the end is rounded up to: runs of
// 16s one after another on one CPU, at a resolution of 10s, start every 16s (every 20s if each
// waited for its step).
func TestAChainOfShortRunsKeepsItsPace(t *testing.T) {
	var pending []Work
	for i := range 4 {
		pending = append(pending, work(fmt.Sprintf("short-%d", i), "q", time.Duration(4-i)*time.Minute, 16*time.Second, cpu(1)))
	}
	set := settings()
	set.Resolution = 10 * time.Second
	got := Predict(snapshot([]Node{node("a", 1, "q", 16*time.Second)}, []Queue{queue("q", "")}, pending...), set)
	for i := range 4 {
		key := fmt.Sprintf("short-%d", i)
		if p50 := got[key].P50.Sub(now); p50 != time.Duration(i+1)*16*time.Second {
			t.Errorf("%s starts at %v, want %v", key, p50, time.Duration(i+1)*16*time.Second)
		}
	}
}

// A piece of work its queue does not admit waits even where room is free: here its queue is at its
// capability until its own pod ends.
func TestWorkWaitsForItsQueue(t *testing.T) {
	s := snapshot([]Node{node("a", 8, "capped", 10*time.Minute, 10*time.Minute)}, []Queue{queue("capped", "2")},
		work("job", "capped", 0, time.Minute, cpu(1)))
	want(t, Predict(s, settings()), "job", 10*time.Minute, 20*time.Minute)
}

// A gang starts once all of its members fit at once; work that never fits has no start.
func TestGangsStartWhole(t *testing.T) {
	s := snapshot([]Node{node("a", 4, "q"), node("b", 4, "q", 0, 5*time.Minute, 5*time.Minute, 5*time.Minute)}, []Queue{queue("q", "")},
		work("gang", "q", time.Minute, time.Minute, cpu(4), cpu(3)), work("never", "q", 0, time.Minute, cpu(5)))
	got := Predict(s, settings())
	want(t, got, "gang", 5*time.Minute, 10*time.Minute)
	if s := got["never"]; !s.P50.IsZero() || !s.P90.IsZero() {
		t.Errorf("work larger than any node starts at %v", s)
	}
}

// Queues share what frees up by their fair shares: a queue's younger work starts before another
// queue's older work once that queue holds its share.
func TestFreedRoomGoesByTheShares(t *testing.T) {
	// 4 CPUs held until 10m by heavy, which is not reclaimable. Then heavy's four 1-CPU jobs, older,
	// and light's two compete: each queue deserves 2, so heavy's third and fourth wait past light's,
	// for a run to end.
	heavy := queue("heavy", "")
	heavy.Reclaimable = false
	got := Predict(sharesSnapshot(heavy), settings())
	for _, key := range []string{"heavy-1", "heavy-2", "light-1", "light-2"} {
		want(t, got, key, 10*time.Minute, 20*time.Minute)
	}
	want(t, got, "heavy-3", 70*time.Minute, 140*time.Minute)
	want(t, got, "heavy-4", 70*time.Minute, 140*time.Minute)
}

// A queue below its share takes back what a reclaimable queue holds above its own, at once: light's
// two jobs start now in the room of two of heavy's runs, and heavy's older jobs take the other two's
// as they end, then light's as those end.
func TestReclaimTakesBackTheShareAtOnce(t *testing.T) {
	got := Predict(sharesSnapshot(queue("heavy", "")), settings())
	want(t, got, "light-1", 0, 0)
	want(t, got, "light-2", 0, 0)
	want(t, got, "heavy-1", 10*time.Minute, 20*time.Minute)
	want(t, got, "heavy-2", 10*time.Minute, 20*time.Minute)
	want(t, got, "heavy-3", 60*time.Minute, 120*time.Minute)
	want(t, got, "heavy-4", 60*time.Minute, 120*time.Minute)
}

// Two reclaims in one moment take back no more than the victim holds above its share: once light-a
// took heavy's one CPU above its share of 2, light-b waits for heavy's runs to end.
func TestReclaimsTakeNoMoreThanAboveTheShare(t *testing.T) {
	n := node("a", 4, "heavy", 10*time.Minute, 10*time.Minute, 10*time.Minute)
	n.Running = append(n.Running, Running{Requests: cpu(1)}) // another scheduler's, for ever
	n.Free.Add(cpu(1), -1)
	heavy := queue("heavy", "")
	heavy.Weight = 2
	s := snapshot([]Node{n}, []Queue{heavy, queue("light-a", ""), queue("light-b", "")},
		work("a", "light-a", time.Minute, time.Hour, cpu(1)), work("b", "light-b", 0, time.Hour, cpu(1)))
	got := Predict(s, settings())
	want(t, got, "a", 0, 0)
	want(t, got, "b", 10*time.Minute, 20*time.Minute)
}

// sharesSnapshot is a node of 4 CPUs that heavy holds until 10m, heavy's four older 1-CPU jobs of an
// hour and light's two younger ones waiting.
func sharesSnapshot(heavy Queue) *Snapshot {
	return snapshot([]Node{node("a", 4, "heavy", 10*time.Minute, 10*time.Minute, 10*time.Minute, 10*time.Minute)},
		[]Queue{heavy, queue("light", "")},
		work("heavy-1", "heavy", 10*time.Minute, time.Hour, cpu(1)), work("heavy-2", "heavy", 9*time.Minute, time.Hour, cpu(1)),
		work("heavy-3", "heavy", 8*time.Minute, time.Hour, cpu(1)), work("heavy-4", "heavy", 7*time.Minute, time.Hour, cpu(1)),
		work("light-1", "light", time.Minute, time.Hour, cpu(1)), work("light-2", "light", 0, time.Hour, cpu(1)))
}

// Room reserved for a waiting gang is taken only by work its runtime bound ends by the reservation's
// start: a pod bound to 5 minutes starts now beside the reservation, a pod without a bound waits for
// the gang to start and end, and the gang starts on its room when the run in its way ends.
func TestReservedRoomIsBackfilledOnlyByWorkThatEndsBeforeIt(t *testing.T) {
	s := snapshot([]Node{node("a", 8, "q", 10*time.Minute, 10*time.Minute, 10*time.Minute, 10*time.Minute)}, []Queue{queue("q", "")},
		work("gang", "q", time.Hour, time.Hour, cpu(4), cpu(4)), work("bounded", "q", time.Minute, 5*time.Minute, cpu(2)),
		work("unbounded", "q", 0, time.Minute, cpu(2)))
	s.Pending[1].Bound = 5 * time.Minute
	s.Reservations = []Reservation{{Gang: "gang", Start: now.Add(10 * time.Minute), Nodes: []Held{{Node: 0, Amount: cpu(8)}}}}
	got := Predict(s, settings())
	want(t, got, "bounded", 0, 0)
	want(t, got, "gang", 10*time.Minute, 20*time.Minute)
	want(t, got, "unbounded", 70*time.Minute, 140*time.Minute)
	s.Reservations = nil
	want(t, Predict(s, settings()), "unbounded", 0, 0)
}

// A gang's reservation keeps its queue's claim on the nodes, so that claim does not bar a pod of a
// queue above its share from borrowing the idle room elsewhere, as the scheduler admits it: stream
// holds 20 of 24 CPUs and deserves 12, research's gang waits for the 16 its reservation holds from
// 10m, and stream's pod starts now on the 4 idle CPUs. Without the reservation the gang's claim
// bars it until the gang has started.
func TestAReservationsClaimDoesNotBarBorrowing(t *testing.T) {
	stream := queue("stream", "")
	stream.Reclaimable = false
	busy := []time.Duration{10 * time.Minute, 10 * time.Minute, 10 * time.Minute, 10 * time.Minute}
	s := snapshot([]Node{node("a", 8, "stream", append(busy, busy...)...), node("b", 8, "stream", append(busy, busy...)...),
		node("c", 8, "stream", 2*time.Hour, 2*time.Hour, 2*time.Hour, 2*time.Hour)}, []Queue{stream, queue("research", "")},
		work("gang", "research", time.Hour, time.Hour, cpu(8), cpu(8)), work("pod", "stream", time.Minute, time.Hour, cpu(1)))
	s.Reservations = []Reservation{{Gang: "gang", Start: now.Add(10 * time.Minute), Nodes: []Held{{Node: 0, Amount: cpu(8)}, {Node: 1, Amount: cpu(8)}}}}
	got := Predict(s, settings())
	want(t, got, "gang", 10*time.Minute, 20*time.Minute)
	want(t, got, "pod", 0, 0)
	s.Reservations = nil
	want(t, Predict(s, settings()), "pod", 10*time.Minute, 20*time.Minute)
}

// A unit of one member (a QueueUnit's one pod to come, a PodGroup of one) is admitted whole, as the
// scheduler admits it: a, holding 1 of the 2 CPUs it deserves, may not take 2 more as a unit, and its
// unit waits for its run to end while b's younger pod starts; a pod of 2 CPUs, admitted below the
// share, would have started at once.
func TestAUnitOfOneMemberIsAdmittedWhole(t *testing.T) {
	a := queue("a", "")
	a.Reclaimable = false
	s := snapshot([]Node{node("n", 4, "a", 10*time.Minute)}, []Queue{a, queue("b", "")},
		work("unit", "a", 2*time.Minute, time.Hour, cpu(2)), work("b-pod", "b", time.Minute, time.Hour, cpu(2)))
	s.Pending[0].Unit = true
	got := Predict(s, settings())
	want(t, got, "unit", 10*time.Minute, 20*time.Minute)
	want(t, got, "b-pod", 0, 0)
	s.Pending[0].Unit = false
	got = Predict(s, settings())
	want(t, got, "unit", 0, 0)
	want(t, got, "b-pod", 10*time.Minute, 20*time.Minute)
}
