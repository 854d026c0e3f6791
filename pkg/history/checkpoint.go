package history

import (
	"math"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// maxMilli is the largest usage written in milli-units: below it, a quantity keeps three decimals.
const maxMilli = 1 << 52 / 1000

// Quantities writes usage as quantities, to three decimals (exact for small amounts: one
// GPU-second is "1", a tenth of a core for a second "100m"), whole units above 4.5e12 and
// arbitrarily large ones as decimal strings.
func Quantities(usage map[v1.ResourceName]float64) v1.ResourceList {
	if len(usage) == 0 {
		return nil
	}
	out := make(v1.ResourceList, len(usage))
	for name, used := range usage {
		out[name] = Quantity(used)
	}
	return out
}

// Quantity writes one amount as Quantities does; zero for what is not a positive number.
func Quantity(used float64) resource.Quantity {
	switch {
	case !(used > 0) || math.IsInf(used, 0):
		return resource.Quantity{Format: resource.DecimalSI}
	case used < maxMilli:
		return *resource.NewMilliQuantity(int64(math.Round(used*1000)), resource.DecimalSI)
	default:
		// Fifteen significant digits and a decimal exponent, which a quantity keeps as written.
		exp := int(math.Floor(math.Log10(used))) - 14
		mantissa := int64(math.Round(used / math.Pow10(exp)))
		q, err := resource.ParseQuantity(strconv.FormatInt(mantissa, 10) + "e" + strconv.Itoa(exp))
		if err != nil {
			return resource.Quantity{Format: resource.DecimalSI}
		}
		return q
	}
}

// Stored is used as a checkpoint keeps it and Restore reads it back: the shares computed from usage
// so rounded are the same before a checkpoint and after its restore.
func Stored(used float64) float64 {
	q := Quantity(used)
	return q.AsApproximateFloat64()
}

// Restore reads a checkpoint back: what quantities say, at when. Negative amounts are left out,
// and a checkpoint from the future is taken as of now, so a wrong clock or a hand-edited status
// can neither give a queue credit nor stop its usage from decaying.
func Restore(quantities v1.ResourceList, when, now time.Time) Usage {
	u := Usage{ResourceSeconds: make(map[v1.ResourceName]float64, len(quantities)), At: when}
	if when.After(now) {
		u.At = now
	}
	for name, q := range quantities {
		if used := q.AsApproximateFloat64(); used > 0 && !math.IsInf(used, 0) {
			u.ResourceSeconds[name] = used
		}
	}
	return u
}
