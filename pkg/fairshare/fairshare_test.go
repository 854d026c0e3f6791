package fairshare

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func cpu(v string) v1.ResourceList { return v1.ResourceList{v1.ResourceCPU: resource.MustParse(v)} }

func leaf(name string, weight int32, demand string) *Queue {
	return &Queue{Name: name, Weight: weight, Demand: cpu(demand)}
}

func cpuOf(l v1.ResourceList) float64 { q := l[v1.ResourceCPU]; return float64(q.MilliValue()) / 1000 }

func TestCompute(t *testing.T) {
	tests := []struct {
		name     string
		children []*Queue
		capacity string
		want     map[string]float64
	}{
		{name: "weights 1:2:3 under unlimited demand", capacity: "60",
			children: []*Queue{leaf("a", 1, "1000"), leaf("b", 2, "1000"), leaf("c", 3, "1000")},
			want:     map[string]float64{"a": 10, "b": 20, "c": 30}},
		{name: "no contention gives every queue its demand", capacity: "60",
			children: []*Queue{leaf("a", 1, "5"), leaf("b", 10, "7")},
			want:     map[string]float64{"a": 5, "b": 7}},
		{name: "a satisfied queue's part goes to the others", capacity: "60",
			children: []*Queue{leaf("a", 1, "100"), leaf("b", 1, "10"), leaf("c", 1, "100")},
			want:     map[string]float64{"a": 25, "b": 10, "c": 25}},
		{name: "capability caps", capacity: "60",
			children: []*Queue{{Name: "a", Weight: 1, Demand: cpu("100"), Capability: cpu("8")}, leaf("b", 1, "100")},
			want:     map[string]float64{"a": 8, "b": 52}},
		{name: "guarantee met beside a heavier queue", capacity: "60",
			children: []*Queue{{Name: "a", Weight: 1, Demand: cpu("100"), Guarantee: cpu("20")}, leaf("b", 10, "100")},
			want:     map[string]float64{"a": 23.636, "b": 36.363}},
		{name: "guarantee reserved without demand", capacity: "60",
			children: []*Queue{{Name: "a", Weight: 1, Guarantee: cpu("20")}, leaf("b", 1, "100")},
			want:     map[string]float64{"a": 20, "b": 40}},
		{name: "guarantees above capacity are scaled", capacity: "30",
			children: []*Queue{{Name: "a", Weight: 1, Guarantee: cpu("40")}, {Name: "b", Weight: 1, Guarantee: cpu("20")}},
			want:     map[string]float64{"a": 20, "b": 10}},
		{name: "a parent's share is split by its children's weights", capacity: "60",
			children: []*Queue{
				{Name: "p", Weight: 1, Children: []*Queue{leaf("p1", 1, "100"), leaf("p2", 3, "100")}},
				leaf("q", 1, "100"),
			},
			want: map[string]float64{"p": 30, "p1": 7.5, "p2": 22.5, "q": 30}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Compute(&Queue{Name: "root", Children: tt.children}, cpu(tt.capacity))
			for name, want := range tt.want {
				if g := cpuOf(got[name]); math.Abs(g-want) > 0.002 {
					t.Errorf("%s deserves %.3f, want %.3f", name, g, want)
				}
			}
		})
	}
}

// randomTree builds a tree of up to three levels with random weights, guarantees, capabilities and
// demands, in CPUs.
func randomTree(r *rand.Rand, depth int, prefix string) []*Queue {
	n := 1 + r.IntN(4)
	out := make([]*Queue, 0, n)
	for i := range n {
		q := &Queue{Name: fmt.Sprintf("%s%d", prefix, i), Weight: int32(1 + r.IntN(10))}
		if r.IntN(3) == 0 {
			q.Guarantee = cpu(fmt.Sprint(r.IntN(20)))
		}
		if r.IntN(3) == 0 {
			q.Capability = cpu(fmt.Sprint(r.IntN(50)))
		}
		if depth > 0 && r.IntN(2) == 0 {
			q.Children = randomTree(r, depth-1, q.Name+".")
		} else {
			q.Demand = cpu(fmt.Sprint(r.IntN(60)))
		}
		out = append(out, q)
	}
	return out
}

func sumDemand(q *Queue) float64 {
	s := cpuOf(q.Demand)
	for _, c := range q.Children {
		s += sumDemand(c)
	}
	return s
}

// checkLevel asserts the properties of one level of the tree and recurses.
func checkLevel(t *testing.T, children []*Queue, available float64, got map[string]v1.ResourceList, contended bool) {
	t.Helper()
	sum := 0.0
	for _, c := range children {
		d := cpuOf(got[c.Name])
		sum += d
		if math.IsNaN(d) || d < 0 {
			t.Fatalf("%s deserves %v", c.Name, d)
		}
		if capQ, ok := c.Capability[v1.ResourceCPU]; ok && d > float64(capQ.MilliValue())/1000+0.001 {
			t.Errorf("%s deserves %.3f above its capability %s", c.Name, d, capQ.String())
		}
		if !contended && d+0.01 < math.Min(sumDemand(c), limitCPU(c)) {
			t.Errorf("without contention %s deserves %.3f below its demand %.3f", c.Name, d, sumDemand(c))
		}
		checkLevel(t, c.Children, d, got, contended)
	}
	if sum > available+0.01 {
		t.Errorf("children deserve %.3f together, above the %.3f they share", sum, available)
	}
}

func limitCPU(q *Queue) float64 {
	if c, ok := q.Capability[v1.ResourceCPU]; ok {
		return float64(c.MilliValue()) / 1000
	}
	return math.Inf(1)
}

func TestProperties(t *testing.T) {
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 7))
		root := &Queue{Name: "root", Children: randomTree(r, 2, "q")}
		capacity := float64(20 + r.IntN(200))
		got := Compute(root, cpu(fmt.Sprint(capacity)))
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			checkLevel(t, root.Children, capacity, got, sumDemand(root) > capacity/4 || hasGuarantee(root))
		})
	}
}

func hasGuarantee(q *Queue) bool {
	if _, ok := q.Guarantee[v1.ResourceCPU]; ok {
		return true
	}
	for _, c := range q.Children {
		if hasGuarantee(c) {
			return true
		}
	}
	return false
}

// Raising a queue's weight never lowers what it deserves.
func TestMonotoneInWeight(t *testing.T) {
	for seed := range uint64(100) {
		r := rand.New(rand.NewPCG(seed, 11))
		children := randomTree(r, 0, "q")
		before := Compute(&Queue{Children: children}, cpu("100"))
		children[0].Weight += int32(1 + r.IntN(5))
		after := Compute(&Queue{Children: children}, cpu("100"))
		if a, b := cpuOf(after[children[0].Name]), cpuOf(before[children[0].Name]); a+0.001 < b {
			t.Errorf("seed %d: more weight lowered %s from %.3f to %.3f", seed, children[0].Name, b, a)
		}
	}
}

func TestOtherResourcesAndUnits(t *testing.T) {
	children := []*Queue{
		{Name: "a", Weight: 1, Demand: v1.ResourceList{v1.ResourceMemory: resource.MustParse("100Gi"), "nvidia.com/gpu": resource.MustParse("8")}},
		{Name: "b", Weight: 1, Demand: v1.ResourceList{v1.ResourceMemory: resource.MustParse("100Gi"), "nvidia.com/gpu": resource.MustParse("1")}},
	}
	got := Compute(&Queue{Children: children}, v1.ResourceList{
		v1.ResourceMemory: resource.MustParse("64Gi"), "nvidia.com/gpu": resource.MustParse("4"),
	})
	if m := got["a"][v1.ResourceMemory]; m.String() != "32Gi" {
		t.Errorf("memory: got %s, want 32Gi", m.String())
	}
	if g := got["a"]["nvidia.com/gpu"]; g.Value() != 3 {
		t.Errorf("gpus for a: got %s, want 3 (b needs only 1)", g.String())
	}
	if _, ok := got["a"][v1.ResourceCPU]; ok {
		t.Error("a resource the cluster does not have was shared")
	}
}

// Quantities up to the API's limits: Quantity.MilliValue overflows int64 above about 9.2 P units (8E
// reads 0, 10Pi negative); the shares must not.
func TestQuantitiesNearInt64Limits(t *testing.T) {
	huge := func(name v1.ResourceName, v string) v1.ResourceList {
		return v1.ResourceList{name: resource.MustParse(v)}
	}
	got := Compute(&Queue{Children: []*Queue{
		{Name: "a", Weight: 1, Capability: cpu("8E"), Demand: cpu("8E")},
		{Name: "b", Weight: 1, Demand: cpu("8E")},
	}}, cpu("16"))
	if a, b := cpuOf(got["a"]), cpuOf(got["b"]); a != 8 || b != 8 {
		t.Errorf("capability 8E cpu, weights 1:1 on 16 cpu: got %v and %v, want 8 each", a, b)
	}
	got = Compute(&Queue{Children: []*Queue{
		{Name: "a", Weight: 1, Demand: huge(v1.ResourceMemory, "100Pi")},
		{Name: "b", Weight: 3, Demand: huge(v1.ResourceMemory, "100Pi"), Capability: huge(v1.ResourceMemory, "8Ei")},
	}}, huge(v1.ResourceMemory, "20Pi"))
	for name, want := range map[string]string{"a": "5Pi", "b": "15Pi"} {
		g, w := got[name][v1.ResourceMemory], resource.MustParse(want)
		if diff := math.Abs(g.AsApproximateFloat64() - w.AsApproximateFloat64()); diff > 1<<20 {
			t.Errorf("memory of %s: got %s, want %s", name, g.String(), want)
		}
	}
}

// The sharing properties hold at every scale, from milli-cpu to exa-units: nothing negative, no
// queue above its capability, children never above what their parent shares.
func TestPropertiesAtEveryScale(t *testing.T) {
	scales := []string{"m", "", "k", "M", "G", "T", "P", "E"}
	quantity := func(r *rand.Rand) resource.Quantity {
		return resource.MustParse(fmt.Sprintf("%d%s", 1+r.IntN(9), scales[r.IntN(len(scales))]))
	}
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 13))
		var children []*Queue
		for i := range 1 + r.IntN(4) {
			q := &Queue{Name: fmt.Sprint("q", i), Weight: int32(1 + r.IntN(10)), Demand: v1.ResourceList{v1.ResourceMemory: quantity(r)}}
			if r.IntN(2) == 0 {
				q.Capability = v1.ResourceList{v1.ResourceMemory: quantity(r)}
			}
			children = append(children, q)
		}
		capacity := quantity(r)
		got := Compute(&Queue{Children: children}, v1.ResourceList{v1.ResourceMemory: capacity})
		sum := 0.0
		for _, c := range children {
			d := got[c.Name][v1.ResourceMemory]
			v := d.AsApproximateFloat64()
			sum += v
			if v < 0 {
				t.Fatalf("seed %d: %s deserves %s", seed, c.Name, d.String())
			}
			if limit, ok := c.Capability[v1.ResourceMemory]; ok && v > limit.AsApproximateFloat64()*(1+1e-9)+1 {
				t.Errorf("seed %d: %s deserves %s above its capability %s", seed, c.Name, d.String(), limit.String())
			}
		}
		if sum > capacity.AsApproximateFloat64()*(1+1e-9)+float64(len(children)) {
			t.Errorf("seed %d: children deserve %g together, above the %s they share", seed, sum, capacity.String())
		}
	}
}
