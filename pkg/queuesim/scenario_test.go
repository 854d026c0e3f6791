package queuesim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const good = `name: ok
duration: 10m
nodes:
- {count: 2, cpu: "8"}
queues:
- {name: a, weight: 2}
jobs:
- {queue: a, count: 3, every: 10s, cpu: 500m, runtime: 1m}
`

func TestParseDefaults(t *testing.T) {
	s, err := Parse("ok.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	j := s.Jobs[0]
	if s.TimeScale != 1 || s.Sample.Duration != 10*time.Second || j.Kind != KindPods || j.Pods != 1 || s.Queues[0].Weight != 2 {
		t.Errorf("defaults: %+v %+v", s, j)
	}
	if got := j.arrivals(nil); len(got) != 3 || got[2] != 20*time.Second {
		t.Errorf("arrivals %v, want 0s, 10s, 20s", got)
	}
}

// Bad scenarios fail before anything starts, with file:line and the rule broken.
func TestParseErrors(t *testing.T) {
	for _, tt := range []struct {
		name, old, new, want string
	}{
		{"unknown field", "runtime: 1m}", "runtime: 1m, colour: red}", `bad.yaml: line 8: field colour not found`},
		{"bad quantity", "cpu: 500m", "cpu: lots", `bad.yaml: line 8: "lots" is not a quantity`},
		{"negative duration", "runtime: 1m", "runtime: -1m", `bad.yaml: line 8: duration -1m must not be negative`},
		{"missing queue", "{queue: a,", "{queue: b,", `bad.yaml:8: jobs[0].queue: queue "b" is not defined in queues`},
		{"no cpu", "cpu: 500m, ", "", `bad.yaml:8: jobs[0].cpu: each pod needs some cpu`},
		{"zero weight", "weight: 2", "weight: -1", `bad.yaml:6: queues[0].weight: must be at least 1, got -1`},
		{"arrival after the end", "count: 3,", "at: 1h, count: 3,", `bad.yaml:8: jobs[0].at: 1h0m0s is after the end of the scenario (10m0s)`},
		{"bad kind", "count: 3,", "kind: Batch, count: 3,", `bad.yaml:8: jobs[0].kind: must be Pods, Gang or Unit, got "Batch"`},
		{"bad action", "jobs:", "actions:\n- {at: 1m, suspend: a, resume: a}\njobs:", `bad.yaml:8: actions[0]: an action does exactly one of suspend, resume, close, open or weight; it has 2`},
		{"root queue", "{name: a, weight: 2}", "{name: root}", `bad.yaml:6: queues[0].name: "root" exists in every cluster already`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			raw := strings.Replace(good, tt.old, tt.new, 1)
			_, err := Parse("bad.yaml", []byte(raw))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// The shipped scenarios parse.
func TestShippedScenariosParse(t *testing.T) {
	files, err := filepath.Glob("../../examples/scenarios/*.yaml")
	if err != nil || len(files) < 4 {
		t.Fatalf("scenarios: %v (err %v), want the demo and three more", files, err)
	}
	for _, f := range files {
		if _, err := Load(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// The scenario the README shows, every field of the format in it, parses.
func TestReadmeScenarioParses(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, found := strings.Cut(string(readme), "A scenario (all times are simulated")
	_, block, fenced := strings.Cut(after, "```yaml\n")
	block, _, closed := strings.Cut(block, "```")
	if !found || !fenced || !closed {
		t.Fatal("the README shows no scenario")
	}
	s, err := Parse("README.md", []byte(block))
	if err != nil {
		t.Fatal(err)
	}
	if s.FairSharing == nil || s.FairSharing.UsageFactor != 1 {
		t.Errorf("the README's scenario has no usage history: %+v", s.FairSharing)
	}
	if !s.Reservations.On() || s.Reservations.Window == nil {
		t.Errorf("the README's scenario has no reservations: %+v", s.Reservations)
	}
}
