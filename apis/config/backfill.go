package config

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// BackfillArgs configures the Backfill plugin: how many waiting gangs get a reservation, how far
// ahead their starts are looked for, and how finely.
type BackfillArgs struct {
	// MaxReservations is how many of the first waiting gangs, in the scheduler's order, are planned a
	// start; DefaultMaxReservations when absent, 0 plans none.
	MaxReservations *int32 `json:"maxReservations,omitempty"`
	// Window is how far ahead a start is looked for: a gang that cannot start within it holds no
	// room; DefaultReservationWindow when zero.
	Window Duration `json:"window,omitempty"`
	// Resolution is the step the running pods' ends are rounded up to, so that the starts move only
	// when an end does; DefaultReservationResolution when zero.
	Resolution Duration `json:"resolution,omitempty"`
	// ReplanInterval is the least time between two plans while gangs wait: pods that ended early or
	// a change of order move the starts at the next plan; DefaultReplanInterval when zero.
	ReplanInterval Duration `json:"replanInterval,omitempty"`
	// LapseAfter is how long a reservation may hold free room without its gang starting: then it
	// lapses, and the gang is left out of the plans for as long again, twice as long at each lapse
	// after that, up to 8 times as long (and the window). A gang held back by what the plan does not model (pod
	// affinity, topology spread, volumes, ports, claims) keeps no room idle for ever;
	// DefaultLapseAfter when zero.
	LapseAfter Duration `json:"lapseAfter,omitempty"`
}

// The Backfill plugin's defaults.
const (
	DefaultMaxReservations       = 5
	DefaultReservationWindow     = 24 * time.Hour
	DefaultReservationResolution = 10 * time.Second
	DefaultReplanInterval        = time.Second
	DefaultLapseAfter            = 2 * time.Minute
)

// minBackfillStep bounds the resolution and the replan interval below.
const minBackfillStep = 100 * time.Millisecond

// DecodeBackfill reads BackfillArgs from a plugin's args (nil means all defaults), defaults and
// validates them.
func DecodeBackfill(obj runtime.Object) (*BackfillArgs, error) {
	args := &BackfillArgs{}
	if err := decodeRaw(obj, args, "Backfill"); err != nil {
		return nil, err
	}
	if args.MaxReservations == nil {
		n := int32(DefaultMaxReservations)
		args.MaxReservations = &n
	}
	for _, d := range []struct {
		value *Duration
		def   time.Duration
	}{{&args.Window, DefaultReservationWindow}, {&args.Resolution, DefaultReservationResolution}, {&args.ReplanInterval, DefaultReplanInterval},
		{&args.LapseAfter, DefaultLapseAfter}} {
		if d.value.Duration == 0 {
			d.value.Duration = d.def
		}
	}
	var errs field.ErrorList
	if *args.MaxReservations < 0 {
		errs = append(errs, field.Invalid(field.NewPath("maxReservations"), *args.MaxReservations, "must not be negative"))
	}
	for _, d := range []struct {
		name  string
		value time.Duration
	}{{"resolution", args.Resolution.Duration}, {"replanInterval", args.ReplanInterval.Duration}} {
		if d.value < minBackfillStep {
			errs = append(errs, field.Invalid(field.NewPath(d.name), d.value.String(), "must be at least "+minBackfillStep.String()))
		}
	}
	if args.Window.Duration < args.Resolution.Duration {
		errs = append(errs, field.Invalid(field.NewPath("window"), args.Window.String(), "must be at least the resolution ("+args.Resolution.String()+")"))
	}
	if args.LapseAfter.Duration < args.ReplanInterval.Duration {
		errs = append(errs, field.Invalid(field.NewPath("lapseAfter"), args.LapseAfter.String(), "must be at least the replan interval ("+args.ReplanInterval.String()+")"))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s args: %w", "Backfill", errs.ToAggregate())
	}
	return args, nil
}
