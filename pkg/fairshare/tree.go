package fairshare

import (
	"maps"
	"math"
	"slices"

	v1 "k8s.io/api/core/v1"
)

// Tree is a queue tree made ready to be shared again and again: built once from a Queue tree, its
// queues' demand and usage set in place as they change, and shared by Share, which reuses the
// queues' lists of the last computation where their share did not change. A Tree is not safe for
// concurrent use.
type Tree struct {
	// nodes are the queues in pre-order: a parent before its children, siblings in their order.
	nodes []treeNode
	index map[string]int
	// names are the resources the last Share shared, sorted.
	names []v1.ResourceName
	// demand, used and amount are, by node, its demand and usage of the resource being shared, its
	// own and its descendants' together, and what it is given of it.
	demand, used, amount []float64
	// given, caps, weights, own and parts are, by child of the parent being split, scratch of one
	// split.
	given, caps, weights, own, parts []float64
}

type treeNode struct {
	queue    Queue // its Children are left out: children holds them
	parent   int
	children []int
	// shares are what the last Share gave the queue, by resource of names, in milli-units;
	// deserved, the same as a list, replaced when they change, never changed in place.
	shares   []float64
	deserved v1.ResourceList
	// floors are the shares deserved was built from, rounded down to the milli-unit: shares of the
	// same floors make the same quantities.
	floors []float64
}

// NewTree flattens the tree below root (root included); a queue reached twice is taken once, at its
// first place.
func NewTree(root *Queue) *Tree {
	t := &Tree{index: map[string]int{}}
	var add func(q *Queue, parent int)
	add = func(q *Queue, parent int) {
		if _, seen := t.index[q.Name]; seen {
			return
		}
		k := len(t.nodes)
		t.index[q.Name] = k
		node := treeNode{queue: *q, parent: parent}
		node.queue.Children = nil
		t.nodes = append(t.nodes, node)
		if parent >= 0 {
			t.nodes[parent].children = append(t.nodes[parent].children, k)
		}
		for _, c := range q.Children {
			add(c, k)
		}
	}
	add(root, -1)
	return t
}

// SetDemand sets what a queue's own work asks for; false for a queue not in the tree.
func (t *Tree) SetDemand(name string, demand v1.ResourceList) bool {
	k, ok := t.index[name]
	if ok {
		t.nodes[k].queue.Demand = demand
	}
	return ok
}

// SetUsage sets what a queue's own work used, decayed; false for a queue not in the tree.
func (t *Tree) SetUsage(name string, usage map[v1.ResourceName]float64) bool {
	k, ok := t.index[name]
	if ok {
		t.nodes[k].queue.Usage = usage
	}
	return ok
}

// Share returns what every queue below the root deserves of capacity, by name, and with a history
// the effective weights that differ from the queues' own (see ComputeRemembering). The lists are
// the tree's: read, never changed; a queue whose share is as the last Share gave it keeps its list.
func (t *Tree) Share(capacity v1.ResourceList, h History) (map[string]v1.ResourceList, Weights) {
	names := slices.Sorted(maps.Keys(capacity))
	reuse := slices.Equal(names, t.names)
	t.names = names
	var weights Weights
	if h.Factor > 0 && h.Horizon > 0 {
		weights = Weights{}
	}
	n := len(t.nodes)
	t.demand, t.used, t.amount = grown(t.demand, n), grown(t.used, n), grown(t.amount, n)
	for k := range t.nodes {
		if !reuse || len(t.nodes[k].shares) != len(names) {
			t.nodes[k].shares = make([]float64, len(names))
		}
	}
	for r, name := range names {
		t.sum(name, weights != nil)
		t.amount[0] = millis(capacity[name])
		for k := range t.nodes {
			if len(t.nodes[k].children) > 0 {
				t.split(k, r, name, h, weights)
			}
		}
	}
	out := make(map[string]v1.ResourceList, max(n-1, 0))
	if len(names) == 0 {
		return out, weights
	}
	for k := 1; k < n; k++ {
		node := &t.nodes[k]
		if !reuse || node.deserved == nil || t.moved(node) {
			node.deserved = make(v1.ResourceList, len(names))
			node.floors = grown(node.floors, len(names))
			for r, name := range names {
				node.deserved[name] = quantity(name, node.shares[r])
				node.floors[r] = floor(node.shares[r])
			}
		}
		out[node.queue.Name] = node.deserved
	}
	return out, weights
}

// moved says whether node's shares round to other quantities than its list holds.
func (t *Tree) moved(node *treeNode) bool {
	if slices.EqualFunc(node.shares, node.floors, func(share, last float64) bool { return floor(share) == last }) {
		return false
	}
	for r, name := range t.names {
		q := quantity(name, node.shares[r])
		if last, ok := node.deserved[name]; !ok || q.Cmp(last) != 0 {
			return true
		}
	}
	return false
}

// floor is a share rounded down to the milli-unit, as quantity rounds it first.
func floor(m float64) float64 { return math.Max(0, math.Floor(m)) }

// sum sets each node's demand of name, and with usage its usage, its own and its descendants'
// together: children come after their parent, so a backward pass sums each before its parent.
func (t *Tree) sum(name v1.ResourceName, usage bool) {
	for k := len(t.nodes) - 1; k >= 0; k-- {
		node := &t.nodes[k]
		demand, used := milli(node.queue.Demand, name), 0.0
		if usage {
			used = node.queue.Usage[name]
		}
		for _, c := range node.children {
			demand += t.demand[c]
			used += t.used[c]
		}
		t.demand[k], t.used[k] = demand, used
	}
}

// split splits what node k is given of name (resource r of names) among its children.
func (t *Tree) split(k, r int, name v1.ResourceName, h History, weights Weights) {
	children := t.nodes[k].children
	given := t.waterFill(children, name, t.amount[k], t.childWeights(children, name, t.amount[k], h, weights))
	for j, c := range children {
		t.amount[c] = given[j]
		t.nodes[c].shares[r] = given[j]
	}
}

// childWeights are the weights children split the rest above their guarantees by: their own, or
// with a usage history their effective ones (recorded in weights where they differ), their usage
// measured against amount, their parent's share in milli-units.
func (t *Tree) childWeights(children []int, name v1.ResourceName, amount float64, h History, weights Weights) []float64 {
	t.weights = t.ownWeights(t.weights, children)
	w := t.weights
	if weights == nil || amount <= 0 {
		return w
	}
	// Only the children that ask for the resource share what is left: an idle sibling's weight
	// takes no part from the others.
	total, used := 0.0, 0.0
	for i, c := range children {
		if t.demand[c] > 0 {
			total += w[i]
			used += t.used[c]
		}
	}
	if !(used > 0) {
		return w // nothing used: the split by weight, exactly
	}
	horizon := amount / 1000 * h.Horizon
	t.parts = grown(t.parts, len(children))
	sum := 0.0
	for i, c := range children {
		t.parts[i] = 0
		if t.demand[c] <= 0 {
			continue
		}
		part := w[i] / total
		t.parts[i] = math.Max(0, part+h.Factor*(part-t.used[c]/horizon))
		sum += t.parts[i]
	}
	if !(sum > 0) {
		return w
	}
	// Scaled so that the effective weights add up to the weights: siblings that used alike keep
	// their own.
	for i, c := range children {
		if t.demand[c] <= 0 {
			continue
		}
		effective := t.parts[i] / sum * total
		if math.Abs(effective-w[i]) <= 1e-9*total {
			continue // its own, to the arithmetic's last digits
		}
		queue := t.nodes[c].queue.Name
		if weights[queue] == nil {
			weights[queue] = map[v1.ResourceName]float64{}
		}
		weights[queue][name] = effective
		w[i] = effective
	}
	return w
}

// waterFill gives each child its guarantee, then splits the rest by weights up to each child's cap.
// Children left with no weight share what the others leave, by their own weights.
func (t *Tree) waterFill(children []int, name v1.ResourceName, amount float64, weights []float64) []float64 {
	given := t.guarantees(children, name, amount)
	t.caps = grown(t.caps, len(children))
	caps := t.caps
	for i, c := range children {
		caps[i] = math.Min(limit(t.nodes[c].queue.Capability, name), t.demand[c])
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
			if !slices.Contains(weights, 0) {
				break
			}
			t.own = t.ownWeights(t.own, children)
			weights = t.own
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

// ownWeights sets buf to the children's own weights, values below 1 counting as 1.
func (t *Tree) ownWeights(buf []float64, children []int) []float64 {
	buf = grown(buf, len(children))
	for i, c := range children {
		buf[i] = float64(max(t.nodes[c].queue.Weight, 1))
	}
	return buf
}

// guarantees gives each child its guarantee, capped by its capability, scaled down proportionally
// when together they exceed amount.
func (t *Tree) guarantees(children []int, name v1.ResourceName, amount float64) []float64 {
	t.given = grown(t.given, len(children))
	given := t.given
	sum := 0.0
	for i, c := range children {
		q := &t.nodes[c].queue
		given[i] = math.Min(milli(q.Guarantee, name), limit(q.Capability, name))
		sum += given[i]
	}
	if sum > amount && sum > 0 {
		for i := range given {
			given[i] *= amount / sum
		}
	}
	return given
}

// grown is buf with length n, its storage reused when it has room.
func grown(buf []float64, n int) []float64 {
	if cap(buf) >= n {
		return buf[:n]
	}
	return make([]float64, n)
}
