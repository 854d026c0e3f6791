package queuesim

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/queue-scheduler/queue-scheduler/pkg/queuesim"
)

// The demo that `make run` plays, the first thing README has a user run, does what its comments
// say: team-c borrows the idle cluster and gives part of it back by reclaim when the others submit;
// team-b, Suspended at first, runs once resumed; team-a's gangs run whole; team-c is closed at the
// end; and the report explains its forecast block.
func TestDemoPlaysAsItsCommentsSay(t *testing.T) {
	path := filepath.Join("..", "..", "..", "examples", "scenarios", "demo.yaml")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := queuesim.Parse(path, src)
	if err != nil {
		t.Fatal(err)
	}
	result, err := queuesim.Run(context.Background(), s, queuesim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	queue := func(name string) queuesim.QueueResult {
		t.Helper()
		q, ok := result.Queue(name)
		if !ok {
			t.Fatalf("no result for queue %s", name)
		}
		return q
	}
	if c := queue("team-c"); c.Evictions == 0 {
		t.Errorf("team-c was never reclaimed from: %+v", c)
	}
	if b := queue("team-b"); b.Completed == 0 {
		t.Errorf("team-b finished nothing after its resume: %+v", b)
	}
	if a := queue("team-a"); a.GangsCompleted == 0 || a.GangsTimedOut != 0 {
		t.Errorf("team-a's gangs: %d completed, %d timed out; want one at least completed, none timed out", a.GangsCompleted, a.GangsTimedOut)
	}
	actions := make([]string, 0, len(result.Actions))
	for _, a := range result.Actions {
		actions = append(actions, a.What)
	}
	for _, want := range []string{"resume team-b", "close team-c"} {
		if !slices.ContainsFunc(actions, func(a string) bool { return strings.Contains(a, want) }) {
			t.Errorf("operator actions %q: want one saying %q", actions, want)
		}
	}
	dir := t.TempDir()
	if err := result.Save(dir); err != nil {
		t.Fatal(err)
	}
	report, err := os.ReadFile(filepath.Join(dir, queuesim.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Expected starts", "(each prediction: a waiting job's expected start"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}
}
