package forecast

// Source is what a runtime, or a running pod's end, was read from, from the weakest to the
// firmest.
type Source int

const (
	// SourceNone is no runtime at all: the basis of a start that waits for no run's end.
	SourceNone Source = iota
	// SourceDefault is the default runtime: nothing like the run has finished yet.
	SourceDefault
	// SourceOutlived is a run that has run longer than every run learned of its kind (or than the
	// default), which therefore tell nothing of its end: it is taken to run as long again.
	SourceOutlived
	// SourceLearned is a runtime learned from finished runs.
	SourceLearned
	// SourceBounded is an end by the run's runtime bound (its activeDeadlineSeconds and grace), or
	// by its deletion, before its runtime would end it.
	SourceBounded
	// SourceKnown is a runtime told ahead of the run (a simulator's).
	SourceKnown
)

// Scope is which finished work a learned runtime was read from, from the closest to the broadest.
type Scope int

const (
	// ScopeNone is no finished work: a runtime not learned.
	ScopeNone Scope = iota
	// ScopeShape is the runs of its queue and kind whose pods had its shape.
	ScopeShape
	// ScopeKind is the runs of its queue and kind, of every shape.
	ScopeKind
	// ScopeQueue is the runs of its queue, of every kind.
	ScopeQueue
	// ScopeKindInAnyQueue is the runs of its kind, in every queue.
	ScopeKindInAnyQueue
	// ScopeAll is all the work that finished.
	ScopeAll
)

// Basis is what a runtime, an end or a start rests on. A start's is that of the end it waits for
// (the end that lets it in, in the play at the central runtimes), which is the weakest of that
// run's own runtime and of what its start waited for in turn.
type Basis struct {
	Source Source
	// Runs and Scope are, for a runtime learned or outlived, how many finished runs it was read
	// from (decayed, rounded) and which.
	Runs  int
	Scope Scope
}

// Weakest is the weaker of a and b: the lower source, of a learned runtime the one of fewer runs,
// or else of broader work; no basis is weaker than none.
func Weakest(a, b Basis) Basis {
	switch {
	case a.Source == SourceNone:
		return b
	case b.Source == SourceNone:
		return a
	case a.Source != b.Source:
		return pick(a.Source < b.Source, a, b)
	case a.Runs != b.Runs:
		return pick(a.Runs < b.Runs, a, b)
	}
	return pick(a.Scope >= b.Scope, a, b)
}

// pick is a when first, else b.
func pick(first bool, a, b Basis) Basis {
	if first {
		return a
	}
	return b
}
