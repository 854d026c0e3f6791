package forecast

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The weaker of two bases: a lower source, of learned runtimes fewer runs, then broader work; no
// basis at all gives way to any.
func TestWeakest(t *testing.T) {
	learned := func(runs int, scope Scope) Basis { return Basis{Source: SourceLearned, Runs: runs, Scope: scope} }
	for _, tt := range []struct {
		name string
		a, b Basis
		want Basis
	}{
		{name: "none and a default", a: Basis{}, b: Basis{Source: SourceDefault}, want: Basis{Source: SourceDefault}},
		{name: "a bound and none", a: Basis{Source: SourceBounded}, b: Basis{}, want: Basis{Source: SourceBounded}},
		{name: "the default and a runtime learned", a: learned(40, ScopeShape), b: Basis{Source: SourceDefault}, want: Basis{Source: SourceDefault}},
		{name: "a run outlived and a runtime learned", a: learned(3, ScopeAll), b: Basis{Source: SourceOutlived, Runs: 12}, want: Basis{Source: SourceOutlived, Runs: 12}},
		{name: "a runtime learned and a bound", a: Basis{Source: SourceBounded}, b: learned(3, ScopeAll), want: learned(3, ScopeAll)},
		{name: "a bound and a runtime known", a: Basis{Source: SourceKnown}, b: Basis{Source: SourceBounded}, want: Basis{Source: SourceBounded}},
		{name: "fewer runs", a: learned(30, ScopeAll), b: learned(4, ScopeShape), want: learned(4, ScopeShape)},
		{name: "as many runs, of broader work", a: learned(4, ScopeShape), b: learned(4, ScopeQueue), want: learned(4, ScopeQueue)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Weakest(tt.a, tt.b)); diff != "" {
				t.Errorf("Weakest (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, Weakest(tt.b, tt.a)); diff != "" {
				t.Errorf("Weakest, the other way round (-want,+got):\n%s", diff)
			}
		})
	}
}

// A start rests on the end it waits for: a running pod's, or that of work the play started, which
// rests on its own runtime and on what its start waited for; work that starts now rests on none.
func TestStartsSayWhatTheyRestOn(t *testing.T) {
	learned := Basis{Source: SourceLearned, Runs: 4, Scope: ScopeKind}
	bounded := Basis{Source: SourceBounded}
	// One CPU, held until 10m by a pod whose end is read from basis.
	holder := func(basis Basis) []Node {
		n := node("a", 1, "q")
		n.Running = []Running{{Queue: "q", Requests: cpu(1), Ends: Ends{P50: now.Add(10 * time.Minute), P90: now.Add(20 * time.Minute), Basis: basis}}}
		n.Free.Add(cpu(1), -1)
		return []Node{n}
	}
	withRuntime := func(w Work, r Runtime) Work {
		w.Runtime = r
		return w
	}
	for _, tt := range []struct {
		name    string
		nodes   []Node
		pending []Work
		want    map[string]Basis
	}{
		{name: "room now", nodes: []Node{node("a", 2, "q")},
			pending: []Work{work("now", "q", time.Minute, time.Minute, cpu(1))},
			want:    map[string]Basis{"now": {}}},
		{name: "waiting for a pod whose runtime is learned", nodes: holder(learned),
			pending: []Work{work("next", "q", time.Minute, time.Minute, cpu(1))},
			want:    map[string]Basis{"next": learned}},
		{name: "behind work of the default runtime, after a bound", nodes: holder(bounded),
			pending: []Work{withRuntime(work("first", "q", 2*time.Minute, 0, cpu(1)), Runtime{}),
				withRuntime(work("second", "q", time.Minute, 0, cpu(1)), Runtime{P50: time.Minute, P90: time.Minute, Basis: Basis{Source: SourceKnown}})},
			want: map[string]Basis{"first": bounded, "second": {Source: SourceDefault}}},
		{name: "behind work learned, after a bound", nodes: holder(bounded),
			pending: []Work{withRuntime(work("first", "q", 2*time.Minute, 0, cpu(1)), Runtime{P50: time.Minute, P90: time.Minute, Basis: learned}),
				work("second", "q", time.Minute, time.Minute, cpu(1))},
			want: map[string]Basis{"first": bounded, "second": learned}},
		{name: "behind work of a bound, after an end learned", nodes: holder(learned),
			pending: []Work{withRuntime(work("first", "q", 2*time.Minute, 0, cpu(1)), Runtime{P50: time.Minute, P90: time.Minute, Basis: bounded}),
				work("second", "q", time.Minute, time.Minute, cpu(1))},
			want: map[string]Basis{"first": learned, "second": learned}},
		{name: "never", nodes: holder(learned),
			pending: []Work{work("huge", "q", time.Minute, time.Minute, cpu(2))},
			want:    map[string]Basis{"huge": {}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := map[string]Basis{}
			for key, s := range Predict(snapshot(tt.nodes, []Queue{queue("q", "")}, tt.pending...), settings()) {
				got[key] = s.Basis
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("bases (-want,+got):\n%s", diff)
			}
		})
	}
}
