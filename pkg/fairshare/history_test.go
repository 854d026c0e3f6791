package fairshare

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	v1 "k8s.io/api/core/v1"
	quota "k8s.io/apiserver/pkg/quota/v1"
)

// sumOver sets sums to each queue's of(q) plus its descendants': the oracle's own, kept apart from
// the Tree's.
func sumOver(q *Queue, of func(*Queue) float64, sums map[*Queue]float64) float64 {
	sum := of(q)
	for _, c := range q.Children {
		sum += sumOver(c, of, sums)
	}
	sums[q] = sum
	return sum
}

// guarantees is the oracle's: each child's guarantee, capped by its capability, scaled down
// proportionally when together they exceed amount.
func guarantees(children []*Queue, name v1.ResourceName, amount float64) []float64 {
	given, sum := make([]float64, len(children)), 0.0
	for i, c := range children {
		given[i] = math.Min(milli(c.Guarantee, name), limit(c.Capability, name))
		sum += given[i]
	}
	scale := 1.0
	if sum > amount && sum > 0 {
		scale = amount / sum
	}
	for i := range given {
		given[i] *= scale
	}
	return given
}

// released is the split by weight alone as released before the usage history, kept as the oracle
// that factor 0 must match exactly.
func released(root *Queue, capacity v1.ResourceList) map[string]v1.ResourceList {
	out := map[string]v1.ResourceList{}
	for name, total := range capacity {
		demand := map[*Queue]float64{}
		sumOver(root, func(q *Queue) float64 { return milli(q.Demand, name) }, demand)
		var walk func(q *Queue, amount float64)
		walk = func(q *Queue, amount float64) {
			if len(q.Children) == 0 {
				return
			}
			given := guarantees(q.Children, name, amount)
			caps := make([]float64, len(q.Children))
			left := amount
			for i, c := range q.Children {
				caps[i] = math.Min(limit(c.Capability, name), demand[c])
				left -= given[i]
			}
			for left > epsilon {
				weight := 0.0
				for i, c := range q.Children {
					if given[i] < caps[i]-epsilon {
						weight += float64(max(c.Weight, 1))
					}
				}
				if weight == 0 {
					break
				}
				handed := 0.0
				for i, c := range q.Children {
					if given[i] < caps[i]-epsilon {
						add := math.Min(left*float64(max(c.Weight, 1))/weight, caps[i]-given[i])
						given[i] += add
						handed += add
					}
				}
				if left -= handed; handed <= epsilon {
					break
				}
			}
			for i, c := range q.Children {
				if out[c.Name] == nil {
					out[c.Name] = v1.ResourceList{}
				}
				out[c.Name][name] = quantity(name, given[i])
				walk(c, given[i])
			}
		}
		walk(root, millis(total))
	}
	return out
}

// withUsage gives every leaf of the tree a random usage of CPU.
func withUsage(r *rand.Rand, qs []*Queue) {
	for _, q := range qs {
		if len(q.Children) == 0 && r.IntN(4) > 0 {
			q.Usage = map[v1.ResourceName]float64{v1.ResourceCPU: r.Float64() * 1e6}
		}
		withUsage(r, q.Children)
	}
}

// Factor 0 gives the shares of the split by weight exactly, whatever the usage, on 300 random
// trees; so does any factor while nothing was used.
func TestFactorZeroIsTheSplitByWeight(t *testing.T) {
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 17))
		root := &Queue{Name: "root", Children: randomTree(r, 2, "q")}
		capacity := cpu(fmt.Sprint(20 + r.IntN(200)))
		want := released(root, capacity)
		unused, _ := ComputeRemembering(root, capacity, History{Factor: 1, Horizon: 3600})
		withUsage(r, root.Children)
		got, weights := ComputeRemembering(root, capacity, History{Horizon: 3600})
		for name, w := range want {
			if !quota.Equals(got[name], w) {
				t.Errorf("seed %d: factor 0 gives %s %v, the split by weight %v", seed, name, got[name], w)
			}
			if !quota.Equals(unused[name], w) {
				t.Errorf("seed %d: without usage, factor 1 gives %s %v, the split by weight %v", seed, name, unused[name], w)
			}
		}
		if len(got) != len(want) || weights != nil {
			t.Errorf("seed %d: factor 0 gave %d shares and weights %v, want %d and none", seed, len(got), weights, len(want))
		}
	}
}

func used(q *Queue, cpuSeconds float64) *Queue {
	q.Usage = map[v1.ResourceName]float64{v1.ResourceCPU: cpuSeconds}
	return q
}

// horizon is the tests' history horizon, in seconds: 60 cpus held all along amount to 6,000
// cpu-seconds.
const horizon = 100

func TestUsageMovesTheRestAboveGuarantees(t *testing.T) {
	tests := []struct {
		name     string
		factor   float64
		children []*Queue
		want     map[string]float64
		weights  map[string]float64
	}{
		{name: "equal weights, a used half the parent's share over the horizon, b a sixth; factor 1", factor: 1,
			children: []*Queue{used(leaf("a", 1, "100"), 3000), used(leaf("b", 1, "100"), 1000)},
			// parts 0.5 + (0.5 − 0.5) = 0.5 and 0.5 + (0.5 − 1/6) = 5/6: 3 to 5
			want: map[string]float64{"a": 22.5, "b": 37.5}, weights: map[string]float64{"a": 0.75, "b": 1.25}},
		{name: "half the strength", factor: 0.5,
			children: []*Queue{used(leaf("a", 1, "100"), 3000), used(leaf("b", 1, "100"), 1000)},
			want:     map[string]float64{"a": 25.714, "b": 34.286}},
		{name: "a queue with no part left still takes what the others leave", factor: 1,
			children: []*Queue{used(leaf("a", 1, "100"), 6000), leaf("b", 1, "20")},
			want:     map[string]float64{"a": 40, "b": 20}, weights: map[string]float64{"a": 0, "b": 2}},
		{name: "an idle sibling's weight takes no part from the others", factor: 1,
			children: []*Queue{used(leaf("a", 1, "100"), 3000), used(leaf("b", 1, "100"), 1000), {Name: "idle", Weight: 4}},
			want:     map[string]float64{"a": 22.5, "b": 37.5, "idle": 0}},
		{name: "a few resource-seconds move nothing", factor: 1,
			children: []*Queue{used(leaf("a", 1, "100"), 0.001), leaf("b", 1, "100")},
			want:     map[string]float64{"a": 30, "b": 30}},
		{name: "guarantees are never reduced", factor: 4,
			children: []*Queue{{Name: "a", Weight: 1, Demand: cpu("100"), Guarantee: cpu("30"), Usage: map[v1.ResourceName]float64{v1.ResourceCPU: 1e6}},
				leaf("b", 1, "100")},
			want: map[string]float64{"a": 30, "b": 30}},
		{name: "weights still count: 3:1 with usage 3:1 is the split by weight", factor: 1,
			children: []*Queue{used(leaf("a", 3, "100"), 3000), used(leaf("b", 1, "100"), 1000)},
			want:     map[string]float64{"a": 45, "b": 15}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, weights := ComputeRemembering(&Queue{Name: "root", Children: tt.children}, cpu("60"), History{Factor: tt.factor, Horizon: horizon})
			for name, want := range tt.want {
				if g := cpuOf(got[name]); math.Abs(g-want) > 0.002 {
					t.Errorf("%s deserves %.3f, want %.3f", name, g, want)
				}
			}
			for name, want := range tt.weights {
				if g := weights[name][v1.ResourceCPU]; math.Abs(g-want) > 1e-9 {
					t.Errorf("%s's effective weight is %v, want %v", name, g, want)
				}
			}
		})
	}
}

// The correction holds at the deepest level as at the top: usage is measured against the parent's
// share, so two teams in a department of 8 cpus, three levels down, that used a tenth of what two
// top-level queues of an 80-cpu cluster used are split alike.
func TestCorrectionAtTheDeepestLevel(t *testing.T) {
	root := &Queue{Name: "root", Children: []*Queue{
		{Name: "big", Weight: 1, Demand: cpu("1000"), Guarantee: cpu("72")},
		{Name: "org", Weight: 1, Guarantee: cpu("8"), Children: []*Queue{
			{Name: "dept", Weight: 1, Children: []*Queue{
				used(leaf("a", 1, "1000"), 300), used(leaf("b", 1, "1000"), 100),
			}},
		}},
	}}
	deep, _ := ComputeRemembering(root, cpu("80"), History{Factor: 1, Horizon: horizon})
	top := &Queue{Name: "root", Children: []*Queue{used(leaf("a", 1, "1000"), 3000), used(leaf("b", 1, "1000"), 1000)}}
	flat, _ := ComputeRemembering(top, cpu("80"), History{Factor: 1, Horizon: horizon})
	// parts 0.5 + (0.5 − 0.375) and 0.5 + (0.5 − 0.125): 5 to 7, at either depth.
	for what, got := range map[string]map[string]v1.ResourceList{"three levels down": deep, "at the top": flat} {
		if a, b := cpuOf(got["a"]), cpuOf(got["b"]); math.Abs(b/a-1.4) > 0.01 {
			t.Errorf("%s, a and b deserve %.3f and %.3f, want 5:7", what, a, b)
		}
	}
	if d := cpuOf(deep["dept"]); d != 8 {
		t.Errorf("dept deserves %.3f, want org's guarantee, 8", d)
	}
}
