package fairshare

import (
	"fmt"
	"math/rand/v2"
	"reflect"
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
// did not change keeps its list.
func TestTreeSharedAgainMatchesATreeBuiltAnew(t *testing.T) {
	h := History{Factor: 1, Horizon: 3600}
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 29))
		root := &Queue{Name: "root", Children: randomTree(r, 2, "q")}
		capacity := cpu(fmt.Sprint(10 + r.IntN(100)))
		tree := NewTree(root)
		last, _ := tree.Share(capacity, h)
		for round := range 5 {
			leaves := leavesOf(root, nil)
			for range 1 + r.IntN(3) {
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
			if len(got) != len(want) {
				t.Fatalf("seed %d round %d: %d queues shared, want %d", seed, round, len(got), len(want))
			}
			for name, w := range want {
				if !quota.Equals(got[name], w) {
					t.Fatalf("seed %d round %d: %s deserves %v shared again, %v built anew", seed, round, name, got[name], w)
				}
				if quota.Equals(last[name], w) && reflect.ValueOf(got[name]).UnsafePointer() != reflect.ValueOf(last[name]).UnsafePointer() {
					t.Fatalf("seed %d round %d: %s's share did not change, yet its list was made anew", seed, round, name)
				}
			}
			if !reflect.DeepEqual(gotWeights, wantWeights) {
				t.Fatalf("seed %d round %d: effective weights %v shared again, %v built anew", seed, round, gotWeights, wantWeights)
			}
			last = got
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
