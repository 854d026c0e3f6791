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
	Demand   v1.ResourceList
	Children []*Queue
}

// Compute returns what every queue below root deserves, by name, sharing capacity among root's
// children. Only the resources of capacity are shared.
func Compute(root *Queue, capacity v1.ResourceList) map[string]v1.ResourceList {
	out := map[string]v1.ResourceList{}
	demand := map[*Queue]float64{}
	for name, total := range capacity {
		totalDemand(root, name, demand)
		share(root, name, millis(total), demand, out)
	}
	return out
}

// totalDemand sets demand to each queue's demand of resource name, in milli-units: its own plus
// its children's.
func totalDemand(q *Queue, name v1.ResourceName, demand map[*Queue]float64) float64 {
	sum := milli(q.Demand, name)
	for _, c := range q.Children {
		sum += totalDemand(c, name, demand)
	}
	demand[q] = sum
	return sum
}

// share splits amount (in milli-units) of resource name among q's children, then recursively below.
func share(q *Queue, name v1.ResourceName, amount float64, demand map[*Queue]float64, out map[string]v1.ResourceList) {
	if len(q.Children) == 0 {
		return
	}
	given := waterFill(q.Children, name, amount, demand)
	for i, c := range q.Children {
		if out[c.Name] == nil {
			out[c.Name] = v1.ResourceList{}
		}
		out[c.Name][name] = quantity(name, given[i])
		share(c, name, given[i], demand, out)
	}
}

// waterFill gives each child its guarantee, then splits the rest by weight up to each child's cap.
func waterFill(children []*Queue, name v1.ResourceName, amount float64, demand map[*Queue]float64) []float64 {
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
		for i, c := range children {
			if given[i] < caps[i]-epsilon {
				weight += float64(max(c.Weight, 1))
			}
		}
		if weight == 0 {
			break
		}
		handed := 0.0
		for i, c := range children {
			if given[i] >= caps[i]-epsilon {
				continue
			}
			add := math.Min(left*float64(max(c.Weight, 1))/weight, caps[i]-given[i])
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
