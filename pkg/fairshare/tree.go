package fairshare

import (
	"maps"
	"math"
	"slices"

	v1 "k8s.io/api/core/v1"
	quota "k8s.io/apiserver/pkg/quota/v1"
)

// Tree is a queue tree made ready to be shared again and again: built once from a Queue tree, its
// queues' demand and usage set in place as they change, and shared by Share, which reuses the
// queues' lists of the last computation where their share did not change. A Share after some
// queues' demand changed, of the same capacity and without a usage history that moves the shares,
// splits again only where the change reaches: the parents on the changed queues' paths, and below
// them only the queues whose share moved. A Tree is not safe for concurrent use.
type Tree struct {
	// nodes are the queues in pre-order: a parent before its children, siblings in their order.
	nodes []treeNode
	index map[string]int
	// names are the resources the last Share shared, sorted; capacity and history what it shared.
	names    []v1.ResourceName
	capacity v1.ResourceList
	history  History
	// demand and used are, by node and resource (node*len(names)+resource), its demand and usage,
	// its own and its descendants' together, as the last Share summed them.
	demand, used []float64
	// set lists the nodes whose own demand or usage was set since the last Share, once each.
	set []int
	// out is the last Share's lists by queue, handed to its caller: replaced, never changed in place.
	out map[string]v1.ResourceList
	// moved names the queues whose list the last Share replaced.
	moved []string
	// given, caps, weights, own and parts are, by child of the parent being split, scratch of one
	// split; stale, summed and split, by node, scratch of one Share.
	given, caps, weights, own, parts []float64
	stale, summed, split             []bool
}

type treeNode struct {
	queue    Queue // its Children are left out: children holds them
	parent   int
	children []int
	// set says whether the node is in the Tree's set.
	set bool
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
		t.touch(k)
	}
	return ok
}

// SetUsage sets what a queue's own work used, decayed; false for a queue not in the tree.
func (t *Tree) SetUsage(name string, usage map[v1.ResourceName]float64) bool {
	k, ok := t.index[name]
	if ok {
		t.nodes[k].queue.Usage = usage
		t.touch(k)
	}
	return ok
}

// touch puts node k in the set of nodes changed since the last Share.
func (t *Tree) touch(k int) {
	if !t.nodes[k].set {
		t.nodes[k].set = true
		t.set = append(t.set, k)
	}
}

// Moved names the queues whose list the last Share replaced: those whose share moved, all of them
// at the first Share.
func (t *Tree) Moved() []string { return t.moved }

// Share returns what every queue below the root deserves of capacity, by name, and with a history
// the effective weights that differ from the queues' own (see ComputeRemembering). The lists are
// the tree's: read, never changed; a queue whose share is as the last Share gave it keeps its list,
// and the map is the last Share's when no list moved.
func (t *Tree) Share(capacity v1.ResourceList, h History) (map[string]v1.ResourceList, Weights) {
	remembering := h.Factor > 0 && h.Horizon > 0
	names := slices.Sorted(maps.Keys(capacity))
	if t.out != nil && !remembering && h == t.history && slices.Equal(names, t.names) && quota.Equals(capacity, t.capacity) {
		t.shareChanged()
		return t.out, nil
	}
	var weights Weights
	if remembering {
		weights = Weights{}
	}
	reuse := slices.Equal(names, t.names)
	t.names, t.capacity, t.history = names, maps.Clone(capacity), h
	n, width := len(t.nodes), len(names)
	t.demand, t.used = grown(t.demand, n*width), grown(t.used, n*width)
	for k := range t.nodes {
		if !reuse || len(t.nodes[k].shares) != width {
			t.nodes[k].shares = make([]float64, width)
		}
	}
	for k := n - 1; k >= 0; k-- {
		t.sum(k, remembering)
	}
	for k := range t.nodes {
		if len(t.nodes[k].children) > 0 {
			t.splitAll(k, h, weights)
		}
	}
	t.clearSet()
	t.out, t.moved = make(map[string]v1.ResourceList, max(n-1, 0)), t.moved[:0]
	if width == 0 {
		return t.out, weights
	}
	for k := 1; k < n; k++ {
		node := &t.nodes[k]
		if !reuse || node.deserved == nil || t.shifted(node) {
			t.relist(node)
		}
		t.out[node.queue.Name] = node.deserved
	}
	return t.out, weights
}

// shareChanged shares again after the demand of the set's nodes changed, with capacity and history
// as the last Share had them and no effective weights: it sums again the set's nodes and their
// ancestors, splits again each parent with a child whose sum moved or whose own share moved, and
// gives a new map only when a list moved.
func (t *Tree) shareChanged() {
	t.moved = t.moved[:0]
	if len(t.set) == 0 {
		return
	}
	n := len(t.nodes)
	t.stale, t.summed, t.split = cleared(t.stale, n), cleared(t.summed, n), cleared(t.split, n)
	for _, k := range t.set {
		for a := k; a >= 0 && !t.stale[a]; a = t.nodes[a].parent {
			t.stale[a] = true
		}
	}
	t.clearSet()
	for k := n - 1; k >= 0; k-- {
		if t.stale[k] {
			t.summed[k] = t.sum(k, false)
		}
	}
	for k := range t.nodes {
		children := t.nodes[k].children
		if len(children) == 0 || !t.split[k] && !slices.ContainsFunc(children, func(c int) bool { return t.summed[c] }) {
			continue
		}
		for _, c := range t.splitAll(k, t.history, nil) {
			t.split[c] = true
		}
	}
	var out map[string]v1.ResourceList
	for k := 1; k < n; k++ {
		node := &t.nodes[k]
		if !t.split[k] || !t.shifted(node) {
			continue
		}
		if out == nil {
			out = maps.Clone(t.out)
		}
		t.relist(node)
		out[node.queue.Name] = node.deserved
	}
	if out != nil {
		t.out = out
	}
}

// relist makes node's list anew from its shares, and names it moved.
func (t *Tree) relist(node *treeNode) {
	node.deserved = make(v1.ResourceList, len(t.names))
	node.floors = grown(node.floors, len(t.names))
	for r, name := range t.names {
		node.deserved[name] = quantity(name, node.shares[r])
		node.floors[r] = floor(node.shares[r])
	}
	t.moved = append(t.moved, node.queue.Name)
}

// clearSet empties the set of nodes changed since the last Share.
func (t *Tree) clearSet() {
	for _, k := range t.set {
		t.nodes[k].set = false
	}
	t.set = t.set[:0]
}

// shifted says whether node's shares round to other quantities than its list holds.
func (t *Tree) shifted(node *treeNode) bool {
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

// sum sets node k's demand, and with usage its usage, of every resource, its own and its
// descendants' together, from its children's sums; it says whether any moved. Children come after
// their parent, so a backward pass sums each before its parent.
func (t *Tree) sum(k int, usage bool) (moved bool) {
	node, width := &t.nodes[k], len(t.names)
	for r, name := range t.names {
		demand, used := milli(node.queue.Demand, name), 0.0
		if usage {
			used = node.queue.Usage[name]
		}
		for _, c := range node.children {
			demand += t.demand[c*width+r]
			used += t.used[c*width+r]
		}
		i := k*width + r
		moved = moved || demand != t.demand[i] || used != t.used[i]
		t.demand[i], t.used[i] = demand, used
	}
	return moved
}

// splitAll splits what node k is given of every resource among its children, and returns the
// children whose share of some resource moved.
func (t *Tree) splitAll(k int, h History, weights Weights) (moved []int) {
	for r, name := range t.names {
		amount := millis(t.capacity[name])
		if k > 0 {
			amount = t.nodes[k].shares[r]
		}
		for _, c := range t.splitOne(k, r, name, amount, h, weights) {
			if !slices.Contains(moved, c) {
				moved = append(moved, c)
			}
		}
	}
	return moved
}

// splitOne splits amount, what node k is given of name (resource r of names), among its children,
// and returns those whose share moved.
func (t *Tree) splitOne(k, r int, name v1.ResourceName, amount float64, h History, weights Weights) (moved []int) {
	children := t.nodes[k].children
	given := t.waterFill(children, r, name, amount, t.childWeights(children, r, name, amount, h, weights))
	for j, c := range children {
		if t.nodes[c].shares[r] != given[j] {
			t.nodes[c].shares[r] = given[j]
			moved = append(moved, c)
		}
	}
	return moved
}

// childWeights are the weights children split the rest above their guarantees by: their own, or
// with a usage history their effective ones (recorded in weights where they differ), their usage
// measured against amount, their parent's share in milli-units.
func (t *Tree) childWeights(children []int, r int, name v1.ResourceName, amount float64, h History, weights Weights) []float64 {
	t.weights = t.ownWeights(t.weights, children)
	w := t.weights
	if weights == nil || amount <= 0 {
		return w
	}
	// Only the children that ask for the resource share what is left: an idle sibling's weight
	// takes no part from the others.
	width := len(t.names)
	total, used := 0.0, 0.0
	for i, c := range children {
		if t.demand[c*width+r] > 0 {
			total += w[i]
			used += t.used[c*width+r]
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
		if t.demand[c*width+r] <= 0 {
			continue
		}
		part := w[i] / total
		t.parts[i] = math.Max(0, part+h.Factor*(part-t.used[c*width+r]/horizon))
		sum += t.parts[i]
	}
	if !(sum > 0) {
		return w
	}
	// Scaled so that the effective weights add up to the weights: siblings that used alike keep
	// their own.
	for i, c := range children {
		if t.demand[c*width+r] <= 0 {
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
func (t *Tree) waterFill(children []int, r int, name v1.ResourceName, amount float64, weights []float64) []float64 {
	given := t.guarantees(children, name, amount)
	t.caps = grown(t.caps, len(children))
	caps, width := t.caps, len(t.names)
	for i, c := range children {
		caps[i] = math.Min(limit(t.nodes[c].queue.Capability, name), t.demand[c*width+r])
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

// cleared is buf with length n, all false, its storage reused when it has room.
func cleared(buf []bool, n int) []bool {
	if cap(buf) >= n {
		buf = buf[:n]
		clear(buf)
		return buf
	}
	return make([]bool, n)
}

// grown is buf with length n, its storage reused when it has room.
func grown(buf []float64, n int) []float64 {
	if cap(buf) >= n {
		return buf[:n]
	}
	return make([]float64, n)
}
