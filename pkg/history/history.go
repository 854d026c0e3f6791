// Package history keeps what each queue used, as decayed usage: resource-seconds of what its pods
// held, each second counting half as much one half-life later. It is pure arithmetic on values
// driven by the time it is given, so a simulated clock plays it as the real one does; the accounting
// owns the state, advances it at each computation of the fair shares and checkpoints it in the
// queues' status.
//
// Between two moments t0 and t1 during which a queue held A of a resource, its usage U moves to
//
//	U(t1) = U(t0)·d + A·(1 − d)/λ,   d = 2^(−(t1−t0)/halfLife),   λ = ln 2 / halfLife
//
// which is exact for any interval over which A holds still: advancing once over an interval or
// many times over its parts gives the same usage. A queue that holds A for ever tends to A/λ, about
// 1.44 half-lives' worth of A. Each pod that starts holding adds its requests times EntryCharge at
// once, so that a burst of admissions weighs on the queue before its pods have run long.
package history

import (
	"math"
	"time"

	v1 "k8s.io/api/core/v1"
)

// Settings say how usage is remembered.
type Settings struct {
	// HalfLife is the time after which a resource-second counts half; 0 keeps no history.
	HalfLife time.Duration
	// ResetPeriod, when not 0, forgets all usage at each multiple of it counted from midnight UTC of
	// Monday 1 January of year 1: 24h at midnight UTC, 168h on Mondays at midnight UTC.
	ResetPeriod time.Duration
	// EntryCharge is how long a pod's requests count as used the moment it starts holding them, on
	// top of the time it then holds them.
	EntryCharge time.Duration
	// Factor is how strongly usage moves the division of what is left above the guarantees: 0 not at
	// all, 1 as much as the weights themselves (see fairshare).
	Factor float64
}

// Least is the least usage remembered, half of what a checkpoint writes (a thousandth): a queue's
// usage decays to nothing, not for ever.
const Least = 0.0005

// Keeps says whether usage is remembered at all.
func (s Settings) Keeps() bool { return s.HalfLife > 0 }

// Horizon is what one unit held all along amounts to, in unit-seconds: the half-life over ln 2.
func (s Settings) Horizon() float64 { return s.HalfLife.Seconds() / math.Ln2 }

// Usage is one queue's decayed usage at a moment, in resource-seconds (milli-units of CPU count a
// thousandth: 2 cores held for 10 s are 20 cpu-seconds; 1 GiB of memory for 1 s, 1 Gi-second).
type Usage struct {
	ResourceSeconds map[v1.ResourceName]float64
	At              time.Time
}

// Advance returns u moved to now: decayed, with allocated held since u.At (from now on if u is
// zero), and entered, the requests of the pods that started holding since, charged at now (a
// negative amount takes back the charge of pods that were unreserved before they were bound). A reset
// boundary in between forgets what came before it. Time never runs backwards: a now before u.At
// leaves u where it stands, entries aside.
func (s Settings) Advance(u Usage, allocated, entered v1.ResourceList, now time.Time) Usage {
	from := u.At
	if from.IsZero() || now.Before(from) {
		from = now
	}
	at := now
	if now.Before(u.At) {
		at = u.At // never backwards: the time since u.At would be counted twice
	}
	out := Usage{ResourceSeconds: make(map[v1.ResourceName]float64, len(u.ResourceSeconds)+len(allocated)), At: at}
	if b := s.lastReset(now); !b.IsZero() && b.After(from) {
		from = b
	} else {
		decay := s.decay(now.Sub(from))
		for name, used := range u.ResourceSeconds {
			out.ResourceSeconds[name] = used * decay
		}
	}
	held := s.heldFor(now.Sub(from))
	for name, q := range allocated {
		out.ResourceSeconds[name] += q.AsApproximateFloat64() * held
	}
	charge := s.EntryCharge.Seconds()
	for name, q := range entered {
		out.ResourceSeconds[name] += q.AsApproximateFloat64() * charge
	}
	for name, used := range out.ResourceSeconds {
		if !(used >= Least) { // below what a checkpoint keeps, negative or NaN: nothing remembered
			delete(out.ResourceSeconds, name)
		}
	}
	return out
}

// Rewind is u taken back to to, before u.At, as if allocated had been held from to until u.At: the
// inverse of Advance with nothing entered. A checkpoint, stamped to the second, holds the usage at
// its stamp this way, so that a restore, which counts what the queue holds as held since the stamp,
// counts no time twice. A time at or after u.At leaves u as it is; what would fall below nothing
// (the queue held less meanwhile), or a reset between to and u.At, leaves nothing.
func (s Settings) Rewind(u Usage, allocated v1.ResourceList, to time.Time) Usage {
	if !to.Before(u.At) {
		return u
	}
	out := Usage{ResourceSeconds: make(map[v1.ResourceName]float64, len(u.ResourceSeconds)), At: to}
	if b := s.lastReset(u.At); !b.IsZero() && b.After(to) {
		return out
	}
	d := u.At.Sub(to)
	held, decay := s.heldFor(d), s.decay(d)
	for name, used := range u.ResourceSeconds {
		q := allocated[name]
		if v := (used - q.AsApproximateFloat64()*held) / decay; v >= Least {
			out.ResourceSeconds[name] = v
		}
	}
	return out
}

// decay is what a resource-second counts after d.
func (s Settings) decay(d time.Duration) float64 {
	if d <= 0 {
		return 1
	}
	return math.Exp2(-d.Seconds() / s.HalfLife.Seconds())
}

// heldFor is the decayed seconds one unit held for the last d counts for now: ∫ 2^(−t/h) dt over
// [0, d], which is (1 − 2^(−d/h))/λ, computed without the loss of precision of 1 − d for short d.
func (s Settings) heldFor(d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	lambda := math.Ln2 / s.HalfLife.Seconds()
	return -math.Expm1(-lambda*d.Seconds()) / lambda
}

// lastReset is the latest reset boundary at or before now; zero without a reset period.
func (s Settings) lastReset(now time.Time) time.Time {
	if s.ResetPeriod <= 0 {
		return time.Time{}
	}
	return now.UTC().Truncate(s.ResetPeriod)
}
