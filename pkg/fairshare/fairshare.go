// Package fairshare computes each queue's deserved share of the cluster: hierarchical, weighted
// water-filling per resource dimension, bounded below by guarantees and above by capabilities and
// demand. It is pure arithmetic on a snapshot; callers decide when to recompute.
//
// At each level of the tree, for each resource: every child first receives its guarantee (scaled down
// proportionally if the guarantees together exceed what the level has); the rest is split by weight
// among the children whose demand is not yet met, each capped at min(capability, demand); a child that
// reaches its cap leaves and its unused part is split again among the others, until nothing is left
// or every child is satisfied. A parent's demand is the sum of its children's; what a parent deserves
// is what its children share. The sum of what children deserve never exceeds what their parent has,
// and without contention every queue deserves at least its demand.
//
// With a usage history (ComputeRemembering), the rest above the guarantees is split by effective
// weights instead, level by level and resource by resource. Among the children of one parent that
// ask for the resource, with W the child's weight over theirs together and U its usage (its own and
// its descendants', decayed, in resource-seconds) over what the parent's share would amount to if
// held over the history's horizon (the parent's share times half-life / ln 2: the usage of a queue
// that held its parent's whole share all along), the child's part is max(0, W + k·(W − U)). A child
// that used more than its weight's part of its parent's share gets less than its weight's part of
// the rest, one that used less gets more; a few resource-seconds move nothing. Usage is measured
// against the parent's share, not the cluster, so the correction holds as strongly at any depth.
// Guarantees, capabilities and demand bound every child as before, and what a child with no part
// left cannot take goes to it once the others are satisfied: the split remembers, it never leaves
// room idle. k = 0 gives the split by weight exactly.
package fairshare

import (
	"math"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Queue is one node of the tree to share.
type Queue struct {
	Name string
	// Weight is the queue's share relative to its siblings; values below 1 count as 1.
	Weight int32
	// Guarantee is reserved for the queue; a missing resource is 0.
	Guarantee v1.ResourceList
	// Capability bounds the queue; a missing resource is unlimited.
	Capability v1.ResourceList
	// Demand is what the queue's own work asks for (leaf queues).
	Demand v1.ResourceList
	// Usage is what the queue's own work used, decayed (pkg/history), by resource.
	Usage    map[v1.ResourceName]float64
	Children []*Queue
}

// Weights are the effective weights of the queues whose usage moved them, by queue and resource, in
// the units of Queue.Weight: a queue of weight 2 that used more than its part has, say, 1.4.
type Weights map[string]map[v1.ResourceName]float64

// Compute returns what every queue below root deserves, by name, sharing capacity among root's
// children. Only the resources of capacity are shared.
func Compute(root *Queue, capacity v1.ResourceList) map[string]v1.ResourceList {
	deserved, _ := ComputeRemembering(root, capacity, History{})
	return deserved
}

// History is how ComputeRemembering reads the queues' usage.
type History struct {
	// Factor is the strength of the correction, k; 0 splits by weight alone.
	Factor float64
	// Horizon is the history's half-life over ln 2, in seconds: what one unit held all along amounts
	// to, in unit-seconds.
	Horizon float64
}

// ComputeRemembering is Compute with the rest above the guarantees split by effective weights (see
// the package's doc), and returns the effective weights that differ from the queues' own.
func ComputeRemembering(root *Queue, capacity v1.ResourceList, h History) (map[string]v1.ResourceList, Weights) {
	return NewTree(root).Share(capacity, h)
}

// epsilon is the smallest amount (a thousandth of a milli-unit) worth handing out.
const epsilon = 1e-3

func milli(l v1.ResourceList, name v1.ResourceName) float64 {
	if q, ok := l[name]; ok {
		return millis(q)
	}
	return 0
}

func limit(l v1.ResourceList, name v1.ResourceName) float64 {
	if q, ok := l[name]; ok {
		return millis(q)
	}
	return math.Inf(1)
}

// millis is a quantity in milli-units, as a float: Quantity.MilliValue overflows int64 above about
// 9.2 P units (memory of 8 PiB and more, a capability of 8E cpu) and answers 0 or a negative number.
func millis(q resource.Quantity) float64 { return q.AsApproximateFloat64() * 1000 }

// maxExact is the largest float64 below 2^63 that converts to int64 exactly and safely.
const maxExact = float64(1<<63 - 1024)

// quantity rounds a milli amount down to a quantity: whole units for resources counted in units
// (memory, pods, devices), milli-units for CPU while they fit int64 (whole cores beyond), saturating
// at the largest int64. The quantity is built in place: a computation makes one per queue and
// resource.
func quantity(name v1.ResourceName, m float64) resource.Quantity {
	m = math.Max(0, math.Floor(m))
	if name == v1.ResourceCPU && m <= maxExact {
		q := resource.Quantity{Format: resource.DecimalSI}
		q.SetMilli(int64(m))
		return q
	}
	q := resource.Quantity{Format: resource.DecimalSI}
	if name == v1.ResourceMemory || name == v1.ResourceEphemeralStorage {
		q.Format = resource.BinarySI
	}
	q.Set(int64(math.Min(math.Floor(m/1000), maxExact)))
	return q
}
