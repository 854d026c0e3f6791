package fairshare

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	quota "k8s.io/apiserver/pkg/quota/v1"
)

// leavesOf lists the leaves below q.
func leavesOf(q *Queue, out []*Queue) []*Queue {
	if len(q.Children) == 0 {
		return append(out, q)
	}
	for _, c := range q.Children {
		out = leavesOf(c, out)
	}
	return out
}

// A Tree shared again after its queues' demand and usage changed gives what a tree built anew from
// the changed queues gives, to the milli-unit, with the same effective weights; a queue whose share
// did not change keeps its list, and Moved names exactly the queues whose list changed. Without a
// history that moves the shares, the Tree splits again only where the change reaches; with one, it
// splits the whole tree.
func TestTreeSharedAgainMatchesATreeBuiltAnew(t *testing.T) {
	for _, h := range []History{{}, {Horizon: 3600}, {Factor: 1, Horizon: 3600}} {
		for seed := range uint64(200) {
			shareAgainAndCompare(t, h, seed)
		}
	}
}

func shareAgainAndCompare(t *testing.T, h History, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 29))
	root := &Queue{Name: "root", Children: randomTree(r, 2, "q")}
	capacity := cpu(fmt.Sprint(10 + r.IntN(100)))
	tree := NewTree(root)
	last, _ := tree.Share(capacity, h)
	for round := range 6 {
		if round == 3 {
			capacity = cpu(fmt.Sprint(10 + r.IntN(100))) // a node came or went: shared whole
		}
		leaves := leavesOf(root, nil)
		for range r.IntN(4) {
			q := leaves[r.IntN(len(leaves))]
			q.Demand = cpu(fmt.Sprint(r.IntN(60)))
			tree.SetDemand(q.Name, q.Demand)
			if r.IntN(2) == 0 {
				q.Usage = map[v1.ResourceName]float64{v1.ResourceCPU: float64(r.IntN(1000)) * 1e6}
				tree.SetUsage(q.Name, q.Usage)
			}
		}
		got, gotWeights := tree.Share(capacity, h)
		want, wantWeights := NewTree(root).Share(capacity, h)
		where := fmt.Sprintf("history %+v seed %d round %d", h, seed, round)
		if len(got) != len(want) {
			t.Fatalf("%s: %d queues shared, want %d", where, len(got), len(want))
		}
		var moved []string
		for name, w := range want {
			if !quota.Equals(got[name], w) {
				t.Fatalf("%s: %s deserves %v shared again, %v built anew", where, name, got[name], w)
			}
			same := reflect.ValueOf(got[name]).UnsafePointer() == reflect.ValueOf(last[name]).UnsafePointer()
			if quota.Equals(last[name], w) && !same {
				t.Fatalf("%s: %s's share did not change, yet its list was made anew", where, name)
			}
			if !same {
				moved = append(moved, name)
			}
		}
		if !reflect.DeepEqual(gotWeights, wantWeights) {
			t.Fatalf("%s: effective weights %v shared again, %v built anew", where, gotWeights, wantWeights)
		}
		if !slices.Equal(slices.Sorted(slices.Values(tree.Moved())), slices.Sorted(slices.Values(moved))) {
			t.Fatalf("%s: Moved names %v, the lists replaced are %v", where, tree.Moved(), moved)
		}
		if len(moved) == 0 && reflect.ValueOf(got).UnsafePointer() != reflect.ValueOf(last).UnsafePointer() && h.Factor == 0 && round != 3 {
			t.Fatalf("%s: no list moved, yet the map was made anew", where)
		}
		last = got
	}
}

// Shared again after one leaf's demand changed, under a parent whose share stays (its sibling is
// capped), only the leaf and its siblings move: the other subtree keeps its lists.
func TestTreeMovesOnlyWhereTheChangeReaches(t *testing.T) {
	busy := &Queue{Name: "busy", Weight: 1, Children: []*Queue{leaf("b1", 1, "100"), leaf("b2", 1, "100")}}
	calm := &Queue{Name: "calm", Weight: 1, Capability: cpu("10"), Children: []*Queue{leaf("c1", 1, "100"), leaf("c2", 1, "100")}}
	root := &Queue{Name: "root", Children: []*Queue{busy, calm}}
	tree := NewTree(root)
	capacity := cpu("100")
	tree.Share(capacity, History{})
	tree.SetDemand("b1", cpu("20"))
	got, _ := tree.Share(capacity, History{})
	// calm is capped at 10 either way: its share did not move, nor its children's.
	if moved := slices.Sorted(slices.Values(tree.Moved())); !slices.Equal(moved, []string{"b1", "b2"}) {
		t.Errorf("moved %v, want b1 and b2 only", moved)
	}
	for name, want := range map[string]float64{"busy": 90, "b1": 20, "b2": 70, "calm": 10, "c1": 5, "c2": 5} {
		if g := cpuOf(got[name]); g != want {
			t.Errorf("%s deserves %.3f, want %.3f", name, g, want)
		}
	}
}

// A queue reached twice is shared once, at its first place; one the tree does not hold takes no
// demand.
func TestTreeTakesAQueueOnce(t *testing.T) {
	shared := leaf("shared", 1, "100")
	root := &Queue{Name: "root", Children: []*Queue{
		{Name: "p", Weight: 1, Children: []*Queue{shared}},
		shared,
		leaf("b", 1, "100"),
	}}
	tree := NewTree(root)
	if tree.SetDemand("nowhere", cpu("5")) {
		t.Error("SetDemand took a queue the tree does not hold")
	}
	got, _ := tree.Share(cpu("60"), History{})
	for name, want := range map[string]float64{"p": 30, "shared": 30, "b": 30} {
		if g := cpuOf(got[name]); g != want {
			t.Errorf("%s deserves %.3f, want %.3f", name, g, want)
		}
	}
}

// With nothing to share, no queue is given a list.
func TestTreeSharesNothingOfNoCapacity(t *testing.T) {
	got, _ := NewTree(&Queue{Name: "root", Children: []*Queue{leaf("a", 1, "5")}}).Share(nil, History{})
	if len(got) != 0 {
		t.Errorf("shares of no capacity: %v", got)
	}
}
