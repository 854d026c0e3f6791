package history

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	quota "k8s.io/apiserver/pkg/quota/v1"

	"github.com/queue-scheduler/queue-scheduler/pkg/fairshare"
)

var start = time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)

func cpu(v string) v1.ResourceList { return v1.ResourceList{v1.ResourceCPU: resource.MustParse(v)} }

func cpuSeconds(u Usage) float64 { return u.ResourceSeconds[v1.ResourceCPU] }

// Without allocation, usage only decays, and by half every half-life, within 1%, whatever the
// half-life and the steps it is advanced by.
func TestDecayIsMonotoneAndHalvesEachHalfLife(t *testing.T) {
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 3))
		s := Settings{HalfLife: time.Duration(1+r.IntN(1000)) * time.Minute}
		u := Usage{ResourceSeconds: map[v1.ResourceName]float64{v1.ResourceCPU: 1 + r.Float64()*1e9}, At: start}
		first := cpuSeconds(u)
		now, prev := start, first
		for now.Before(start.Add(s.HalfLife)) {
			now = now.Add(time.Duration(1 + r.Int64N(int64(s.HalfLife/10))))
			if now.After(start.Add(s.HalfLife)) {
				now = start.Add(s.HalfLife)
			}
			u = s.Advance(u, nil, nil, now)
			if got := cpuSeconds(u); got > prev {
				t.Fatalf("seed %d: usage grew from %v to %v without allocation", seed, prev, got)
			} else {
				prev = got
			}
		}
		if got := cpuSeconds(u); math.Abs(got-first/2) > 0.01*first/2 {
			t.Errorf("seed %d: after one half-life (%v) usage is %v, want %v within 1%%", seed, s.HalfLife, got, first/2)
		}
	}
}

// Advancing over an interval once, or in many steps, gives the same usage: the decay and the
// accrual are exact for any interval over which the allocation holds still.
func TestStepsDoNotMatter(t *testing.T) {
	s := Settings{HalfLife: time.Hour}
	one := s.Advance(Usage{At: start}, cpu("4"), nil, start.Add(3*time.Hour))
	many := Usage{At: start}
	for i := 1; i <= 10800; i++ {
		many = s.Advance(many, cpu("4"), nil, start.Add(time.Duration(i)*time.Second))
	}
	if a, b := cpuSeconds(one), cpuSeconds(many); math.Abs(a-b) > 1e-9*a {
		t.Errorf("one step gives %v cpu-seconds, 10,800 steps %v", a, b)
	}
	// 4 cores for 3 half-lives: 4·(1 − 1/8)/λ.
	if want := 4 * (1 - 0.125) * 3600 / math.Ln2; math.Abs(cpuSeconds(one)-want) > 1e-6*want {
		t.Errorf("4 cores for three half-lives: %v cpu-seconds, want %v", cpuSeconds(one), want)
	}
	// Held for ever, usage tends to A/λ.
	steady := s.Advance(Usage{At: start}, cpu("4"), nil, start.Add(100*time.Hour))
	if want := 4 * 3600 / math.Ln2; math.Abs(cpuSeconds(steady)-want) > 0.01*want {
		t.Errorf("held for ever: %v cpu-seconds, want %v", cpuSeconds(steady), want)
	}
}

func TestEntryChargeResetAndTime(t *testing.T) {
	s := Settings{HalfLife: time.Hour, EntryCharge: time.Minute}
	u := s.Advance(Usage{}, nil, v1.ResourceList{"nvidia.com/gpu": resource.MustParse("2")}, start)
	if got := u.ResourceSeconds["nvidia.com/gpu"]; got != 120 {
		t.Errorf("two GPUs entering with a one-minute charge: %v GPU-seconds, want 120", got)
	}
	if back := s.Advance(u, cpu("1"), nil, start.Add(-time.Hour)); !back.At.Equal(start) || back.ResourceSeconds["nvidia.com/gpu"] != 120 || cpuSeconds(back) != 0 {
		t.Errorf("a clock that ran backwards changed the usage: %v", back)
	}
	tiny := s.Advance(Usage{ResourceSeconds: map[v1.ResourceName]float64{v1.ResourceCPU: 0.0009}, At: start}, nil, nil, start.Add(time.Hour))
	if _, ok := tiny.ResourceSeconds[v1.ResourceCPU]; ok {
		t.Errorf("0.0009 cpu-seconds a half-life ago are still remembered: %v; want them gone below %v", tiny.ResourceSeconds, Least)
	}
	daily := Settings{HalfLife: 24 * time.Hour, ResetPeriod: 24 * time.Hour}
	late := daily.Advance(Usage{}, cpu("1"), nil, start)
	late = daily.Advance(late, cpu("1"), nil, start.Add(14*time.Hour)) // 23:00 UTC
	if got, want := cpuSeconds(late), daily.heldFor(14*time.Hour); math.Abs(got-want) > 1e-6 {
		t.Errorf("before midnight UTC the usage was %v, want %v (14 hours' worth)", got, want)
	}
	after := daily.Advance(late, cpu("1"), nil, start.Add(17*time.Hour)) // 02:00 UTC the day after
	if got, want := cpuSeconds(after), daily.heldFor(2*time.Hour); math.Abs(got-want) > 1e-6 {
		t.Errorf("two hours after the daily reset the usage is %v, want %v (what came before forgotten)", got, want)
	}
}

// A checkpoint read back gives the same usage, to the milli-unit (15 digits when larger), and the
// same shares.
func TestCheckpointRestoresTheShares(t *testing.T) {
	for seed := range uint64(100) {
		r := rand.New(rand.NewPCG(seed, 5))
		var live, restored []*fairshare.Queue
		for i := range 2 + r.IntN(5) {
			name := fmt.Sprint("q", i)
			u := Usage{ResourceSeconds: map[v1.ResourceName]float64{
				v1.ResourceCPU: r.Float64() * math.Pow(10, float64(r.IntN(12))), v1.ResourceMemory: r.Float64() * 1e21, "nvidia.com/gpu": float64(r.IntN(5)),
			}, At: start}
			back := Restore(Quantities(u.ResourceSeconds), start, start.Add(time.Hour))
			for res, v := range u.ResourceSeconds {
				if got := back.ResourceSeconds[res]; math.Abs(got-v) > math.Max(0.0005, 1e-14*v) {
					t.Fatalf("seed %d: %s of %s was %v, restored %v", seed, res, name, v, got)
				}
			}
			demand := v1.ResourceList{v1.ResourceCPU: resource.MustParse("1k"), v1.ResourceMemory: resource.MustParse("1Pi"), "nvidia.com/gpu": resource.MustParse("64")}
			weight := int32(1 + r.IntN(5))
			// The accounting hands the shares its usage as stored (Stored), as a restore reads it.
			stored := map[v1.ResourceName]float64{}
			for res, v := range u.ResourceSeconds {
				stored[res] = Stored(v)
			}
			live = append(live, &fairshare.Queue{Name: name, Weight: weight, Demand: demand, Usage: stored})
			restored = append(restored, &fairshare.Queue{Name: name, Weight: weight, Demand: demand, Usage: back.ResourceSeconds})
		}
		capacity := v1.ResourceList{v1.ResourceCPU: resource.MustParse("100"), v1.ResourceMemory: resource.MustParse("1Ti"), "nvidia.com/gpu": resource.MustParse("16")}
		want, _ := fairshare.ComputeRemembering(&fairshare.Queue{Name: "root", Children: live}, capacity, fairshare.History{Factor: 1, Horizon: Settings{HalfLife: time.Hour}.Horizon()})
		got, _ := fairshare.ComputeRemembering(&fairshare.Queue{Name: "root", Children: restored}, capacity, fairshare.History{Factor: 1, Horizon: Settings{HalfLife: time.Hour}.Horizon()})
		for name := range want {
			if !quota.Equals(want[name], got[name]) {
				t.Errorf("seed %d: %s deserves %v live and %v restored", seed, name, want[name], got[name])
			}
		}
	}
}

func TestRestoreRefusesCredit(t *testing.T) {
	bad := v1.ResourceList{v1.ResourceCPU: resource.MustParse("-5"), v1.ResourceMemory: resource.MustParse("3Gi")}
	u := Restore(bad, start.Add(time.Hour), start)
	if _, ok := u.ResourceSeconds[v1.ResourceCPU]; ok || !u.At.Equal(start) || u.ResourceSeconds[v1.ResourceMemory] != 3*(1<<30) {
		t.Errorf("restored %v at %v: want no negative usage and the future taken as now", u.ResourceSeconds, u.At)
	}
	if q := Quantity(math.NaN()); !q.IsZero() {
		t.Errorf("NaN written as %s", q.String())
	}
	for _, v := range []float64{1e21, 123456789012345678e6} {
		q := Quantity(v)
		if got := q.AsApproximateFloat64(); math.Abs(got-v) > 1e-14*v {
			t.Errorf("%g written as %s, read back as %g", v, q.String(), got)
		}
		if back := resource.MustParse(q.String()); back.Cmp(q) != 0 {
			t.Errorf("%g written as %s, which parses to %s", v, q.String(), back.String())
		}
	}
}

// Rewind takes a usage back as if the allocation had been held meanwhile: advancing the rewound
// usage to the moment it was taken at gives it back, for any span; a checkpoint stamped at the
// rewound time and restored later counts what the live history counts. Rewinding past a change of
// allocation leaves nothing below zero, and a time at or after the usage's leaves it as it is.
func TestRewindIsTheInverseOfAdvance(t *testing.T) {
	s := Settings{HalfLife: time.Hour}
	used := s.Advance(Usage{At: start}, cpu("3"), nil, start.Add(90*time.Minute))
	for _, back := range []time.Duration{time.Millisecond, 400 * time.Millisecond, 999 * time.Millisecond, 10 * time.Minute} {
		to := used.At.Add(-back)
		rewound := s.Rewind(used, cpu("3"), to)
		if again := s.Advance(rewound, cpu("3"), nil, used.At); math.Abs(cpuSeconds(again)-cpuSeconds(used)) > 1e-9*cpuSeconds(used) {
			t.Errorf("rewound %s and advanced again: %v cpu-seconds, want %v", back, cpuSeconds(again), cpuSeconds(used))
		}
		// As a restore: the checkpoint at to, the queue holding 3 cpus since, read 2 minutes later.
		later := used.At.Add(2 * time.Minute)
		if restored, live := s.Advance(Restore(Quantities(rewound.ResourceSeconds), to, later), cpu("3"), nil, later),
			s.Advance(used, cpu("3"), nil, later); math.Abs(cpuSeconds(restored)-cpuSeconds(live)) > 1e-3 {
			t.Errorf("restored from a checkpoint rewound %s: %v cpu-seconds, the live history %v", back, cpuSeconds(restored), cpuSeconds(live))
		}
	}
	if got := s.Rewind(used, cpu("1000"), used.At.Add(-time.Hour)); len(got.ResourceSeconds) != 0 {
		t.Errorf("rewound past more than was used: %v, want nothing", got.ResourceSeconds)
	}
	if got := s.Rewind(used, cpu("3"), used.At.Add(time.Second)); cpuSeconds(got) != cpuSeconds(used) || !got.At.Equal(used.At) {
		t.Errorf("rewound forward: %+v, want %+v", got, used)
	}
}
