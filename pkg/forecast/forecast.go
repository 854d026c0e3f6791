// Package forecast predicts when pending work starts. From a snapshot of the cluster (each node's
// free room, and when each running pod ends) and of the queues, it plays the scheduling policy
// forward in simulated time: at each step of the resolution in which room frees up, the queues'
// fair shares are computed again from their demand (pkg/fairshare), and as each run ends, in order,
// the pending work, in the scheduler's order, starts where its queue admits it (pkg/policy) and its
// members fit on the nodes. It plays twice: once with
// every runtime at its central value (the caller's: the controller gives the mean of the runs it
// learned), once at its 90th percentile, for a p50 and a p90 start; each p50 start says what it
// rests on (Basis): what the runtime of the run whose end it waits for was read from. It is pure:
// no informer, lock on shared state, client or clock.
package forecast

import (
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/queue-scheduler/queue-scheduler/pkg/podfit"
	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
)

// Vector is an amount of each resource the forecast reads, in the order of the snapshot's Dims, in
// the units of the scheduler's NodeInfo: milli-cpu, bytes, and whole units of every other resource.
type Vector = podfit.Vector

// Snapshot is what a forecast starts from.
type Snapshot struct {
	// Now is the moment the snapshot holds.
	Now time.Time
	// Dims names the resources of every vector.
	Dims []v1.ResourceName
	// Nodes are the schedulable nodes.
	Nodes []Node
	// Queues are every queue, the root included (Parent ""), parents before children or not.
	Queues []Queue
	// Pending is the work that waits, in any order: the forecast takes it in the scheduler's.
	Pending []Work
	// Reservations are the room waiting gangs are promised (the Backfill plugin).
	Reservations []Reservation
}

// Reservation is room a waiting gang is promised from Start on some nodes. Until the gang starts,
// other work takes that room only if its runtime bound ends it by Start; it may take what the
// reservation leaves of a node's room now.
type Reservation struct {
	// Gang is the key of the gang's work.
	Gang  string
	Start time.Time
	Nodes []Held
}

// Held is a reservation's room on one node, by index in the snapshot's nodes.
type Held struct {
	Node   int
	Amount Vector
}

// Node is one node: its free room now, and its running pods. A cordoned node takes no new pods.
type Node struct {
	Name     string
	Free     Vector
	Running  []Running
	Cordoned bool
}

// Running is a running pod: its queue, what it holds, and when it ends.
type Running struct {
	Queue    string
	Requests Vector
	// Ends is when it ends, centrally and at the 90th percentile; a zero time is never.
	Ends Ends
}

// Ends are an end at its central value (P50) and at the 90th percentile, and what the central one
// was read from.
type Ends struct {
	P50, P90 time.Time
	Basis    Basis
}

// Queue is a queue as the fair shares and the admission read it.
type Queue struct {
	Name, Parent string
	Weight       int32
	// Guarantee and Capability bound what the queue deserves and holds.
	Guarantee, Capability  v1.ResourceList
	Reclaimable, Suspended bool
}

// Work is a pending pod, gang or unit of work.
type Work struct {
	// Key names it ("PodGroup/ns/name", "Pod/ns/name"...): the forecast's answers are by key.
	Key   string
	Queue string
	// Place is where it stands in the scheduler's order.
	Place policy.Place
	// Members are the pods that must start together (one for a pod alone).
	Members []Member
	// Runtime is how long it runs once started, centrally and at the 90th percentile; zero
	// values take the settings' default.
	Runtime Runtime
	// Bound is how long it runs at the most, by its pods' runtime bounds; zero for no bound.
	Bound time.Duration
	// Unit says it is admitted whole, as the scheduler admits a PodGroup or a QueueUnit, even of one
	// member; other work of one member is admitted as a pod is.
	Unit bool
}

// Member is one pod of a piece of work.
type Member struct {
	Requests Vector
	// Eligible says, by index in the snapshot's nodes, where the pod may run; nil is everywhere.
	Eligible []bool
}

// Runtime is a run's length at its central value (P50) and at the 90th percentile, and what the
// central one was read from.
type Runtime struct {
	P50, P90 time.Duration
	Basis    Basis
}

// Settings bound a forecast.
type Settings struct {
	// Horizon is how far ahead starts are looked for: work that does not start by then has none.
	Horizon time.Duration
	// Resolution is the step ends are rounded up to: the fair shares are computed once per step, and
	// the runs that end within one step leave in the order of their exact ends, the work each lets
	// in starting at that end.
	Resolution time.Duration
	// DefaultRuntime is the runtime of work that states none; its basis is the default's, whatever it
	// says.
	DefaultRuntime Runtime
}

// Start is a piece of work's predicted start at the central value and at the 90th percentile of the
// runtimes (a zero time is not within the horizon), and what the central one rests on: the basis of
// the end it waits for; none for a start now or none within the horizon.
type Start struct {
	P50, P90 time.Time
	Basis    Basis
}

// Predict returns the predicted start of every pending piece of work, by key.
func Predict(s *Snapshot, settings Settings) map[string]Start {
	out := make(map[string]Start, len(s.Pending))
	p50, basis := play(s, settings, false)
	p90, _ := play(s, settings, true)
	for _, w := range s.Pending {
		out[w.Key] = Start{P50: p50[w.Key], P90: p90[w.Key], Basis: basis[w.Key]}
	}
	return out
}
