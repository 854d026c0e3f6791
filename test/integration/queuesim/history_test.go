package queuesim

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/queue-scheduler/queue-scheduler/pkg/queuesim"
)

// playHistory plays examples/scenarios/<name>.yaml, with its usage factor set to factor, and
// returns each watched queue's samples by the simulated minute they were taken in.
func playHistory(t *testing.T, name string, factor float64) map[string]map[int]queuesim.Sample {
	t.Helper()
	s, err := queuesim.Load(filepath.Join("..", "..", "..", "examples", "scenarios", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s.FairSharing.UsageFactor = factor
	result, err := queuesim.Run(context.Background(), s, queuesim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[int]queuesim.Sample{}
	for _, smp := range result.Samples {
		if out[smp.Queue] == nil {
			out[smp.Queue] = map[int]queuesim.Sample{}
		}
		out[smp.Queue][int(smp.At/time.Minute)] = smp
	}
	return out
}

// sharesOf prints a queue's deserved cpu and usage minute by minute, for a failure's message.
func sharesOf(samples map[int]queuesim.Sample) string {
	out := ""
	for m := 14; m < 32; m++ {
		s := samples[m]
		out += fmt.Sprintf(" %dm:%.1f/%.2fh", m, s.Deserved, s.Usage)
	}
	return out
}

// checkRemembered asserts what the history scenarios show: the team that ran alone in the first
// half deserves less than the other once both ask (minutes 17 and 18), the two converge to equal
// shares (within 2 cpu at minute 31), and the first team's usage is the larger when both start.
func checkRemembered(t *testing.T, runs map[string]map[int]queuesim.Sample, total float64) {
	t.Helper()
	a, b := runs["team-a"], runs["team-b"]
	for _, m := range []int{17, 18} {
		if a[m].Deserved >= b[m].Deserved {
			t.Errorf("minute %d: team-a, which used the cluster alone, deserves %.1f cpu, team-b %.1f: want less\nteam-a%s\nteam-b%s",
				m, a[m].Deserved, b[m].Deserved, sharesOf(a), sharesOf(b))
		}
	}
	if d := math.Abs(a[31].Deserved - b[31].Deserved); d > 2 || a[31].Deserved+b[31].Deserved < total-1 {
		t.Errorf("minute 31: team-a deserves %.1f, team-b %.1f: want them converged to %.0f each\nteam-a%s\nteam-b%s",
			a[31].Deserved, b[31].Deserved, total/2, sharesOf(a), sharesOf(b))
	}
	if a[16].Usage <= b[16].Usage || a[16].Usage < 1 {
		t.Errorf("minute 16: team-a used %.2f core-hours, team-b %.2f: want team-a's the larger", a[16].Usage, b[16].Usage)
	}
}

func TestHistoryShiftsTheSharesAndConverges(t *testing.T) {
	checkRemembered(t, playHistory(t, "history", 1), 48)
}

// The same scenario without the history's effect: equal shares as soon as both ask.
func TestWithoutHistoryTheSharesAreEqualAtOnce(t *testing.T) {
	runs := playHistory(t, "history", 0)
	for m := 17; m < 32; m++ {
		a, b := runs["team-a"][m], runs["team-b"][m]
		if math.Abs(a.Deserved-24) > 0.5 || math.Abs(b.Deserved-24) > 0.5 {
			t.Errorf("minute %d: team-a deserves %.1f, team-b %.1f: want 24 each, usage aside", m, a.Deserved, b.Deserved)
		}
	}
}

// Three levels deep, team-a and team-b split dept's 24 cpu by their usage as two top-level queues
// would, while org and other keep the 24 cpu each is guaranteed.
func TestHistoryCorrectsAtTheDeepestLevel(t *testing.T) {
	runs := playHistory(t, "history-deep", 1)
	checkRemembered(t, runs, 24)
	for m := 17; m < 32; m++ {
		if org, other := runs["org"][m].Deserved, runs["other"][m].Deserved; math.Abs(org-24) > 1 || math.Abs(other-24) > 1 {
			t.Errorf("minute %d: org deserves %.1f, other %.1f: want the 24 each is guaranteed", m, org, other)
		}
	}
}
