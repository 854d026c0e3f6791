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
	c := computation{out: map[string]v1.ResourceList{}, demand: map[*Queue]float64{}, history: h}
	if h.Factor > 0 && h.Horizon > 0 {
		c.used, c.weights = map[*Queue]float64{}, Weights{}
	}
	for name, total := range capacity {
		sumOver(root, func(q *Queue) float64 { return milli(q.Demand, name) }, c.demand)
		if c.used != nil {
			sumOver(root, func(q *Queue) float64 { return q.Usage[name] }, c.used)
		}
		c.share(root, name, millis(total))
	}
	return c.out, c.weights
}

// computation is one run of ComputeRemembering: each queue's demand and usage of the resource being
// shared, its own and its descendants' together.
type computation struct {
	out          map[string]v1.ResourceList
	demand, used map[*Queue]float64
	history      History
	weights      Weights
}

// sumOver sets sums to each queue's of(q) plus its descendants'.
func sumOver(q *Queue, of func(*Queue) float64, sums map[*Queue]float64) float64 {
	sum := of(q)
	for _, c := range q.Children {
		sum += sumOver(c, of, sums)
	}
	sums[q] = sum
	return sum
}

// share splits amount (in milli-units) of resource name among q's children, then recursively below.
func (c *computation) share(q *Queue, name v1.ResourceName, amount float64) {
	if len(q.Children) == 0 {
		return
	}
	given := waterFill(q.Children, name, amount, c.demand, c.childWeights(q.Children, name, amount))
	for i, child := range q.Children {
		if c.out[child.Name] == nil {
			c.out[child.Name] = v1.ResourceList{}
		}
		c.out[child.Name][name] = quantity(name, given[i])
		c.share(child, name, given[i])
	}
}

// childWeights are the weights children split the rest above their guarantees by: their own, or
// with a usage history their effective ones (recorded in c.weights where they differ), their usage
// measured against amount, their parent's share in milli-units.
func (c *computation) childWeights(children []*Queue, name v1.ResourceName, amount float64) []float64 {
	weights := ownWeights(children)
	if c.used == nil || amount <= 0 {
		return weights
	}
	// Only the children that ask for the resource share what is left: an idle sibling's weight
	// takes no part from the others.
	total, used := 0.0, 0.0
	for i, child := range children {
		if c.demand[child] > 0 {
			total += weights[i]
			used += c.used[child]
		}
	}
	if !(used > 0) {
		return weights // nothing used: the split by weight, exactly
	}
	horizon := amount / 1000 * c.history.Horizon
	parts, sum := make([]float64, len(children)), 0.0
	for i, child := range children {
		if c.demand[child] <= 0 {
			continue
		}
		part := weights[i] / total
		parts[i] = math.Max(0, part+c.history.Factor*(part-c.used[child]/horizon))
		sum += parts[i]
	}
	if !(sum > 0) {
		return weights
	}
	// Scaled so that the effective weights add up to the weights: siblings that used alike keep
	// their own.
	for i, child := range children {
		if c.demand[child] <= 0 {
			continue
		}
		effective := parts[i] / sum * total
		if math.Abs(effective-weights[i]) <= 1e-9*total {
			continue // its own, to the arithmetic's last digits
		}
		if c.weights[child.Name] == nil {
			c.weights[child.Name] = map[v1.ResourceName]float64{}
		}
		c.weights[child.Name][name] = effective
		weights[i] = effective
	}
	return weights
}

// waterFill gives each child its guarantee, then splits the rest by weights up to each child's cap.
// Children left with no weight share what the others leave, by their own weights.
func waterFill(children []*Queue, name v1.ResourceName, amount float64, demand map[*Queue]float64, weights []float64) []float64 {
	given := guarantees(children, name, amount)
	caps := make([]float64, len(children))
	for i, c := range children {
		caps[i] = math.Min(limit(c.Capability, name), demand[c])
	}
	left := amount
	for _, g := range given {
		left -= g
	}
	for left > epsilon {
		weight := 0.0
		for i := range children {
			if given[i] < caps[i]-epsilon {
				weight += weights[i]
			}
		}
		if weight == 0 {
			if !anyZero(weights) {
				break
			}
			weights = ownWeights(children)
			continue
		}
		handed := 0.0
		for i := range children {
			if given[i] >= caps[i]-epsilon {
				continue
			}
			add := math.Min(left*weights[i]/weight, caps[i]-given[i])
			given[i] += add
			handed += add
		}
		left -= handed
		if handed <= epsilon {
			break
		}
	}
	return given
}

func anyZero(weights []float64) bool {
	for _, w := range weights {
		if w == 0 {
			return true
		}
	}
	return false
}

// ownWeights are the children's own weights, values below 1 counting as 1.
func ownWeights(children []*Queue) []float64 {
	weights := make([]float64, len(children))
	for i, c := range children {
		weights[i] = float64(max(c.Weight, 1))
	}
	return weights
}

// epsilon is the smallest amount (a thousandth of a milli-unit) worth handing out.
const epsilon = 1e-3

// guarantees gives each child its guarantee, capped by its capability, scaled down proportionally
// when together they exceed amount.
func guarantees(children []*Queue, name v1.ResourceName, amount float64) []float64 {
	given := make([]float64, len(children))
	sum := 0.0
	for i, c := range children {
		given[i] = math.Min(milli(c.Guarantee, name), limit(c.Capability, name))
		sum += given[i]
	}
	if sum > amount && sum > 0 {
		for i := range given {
			given[i] *= amount / sum
		}
	}
	return given
}

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
