package queuesim

import (
	"bytes"
	"fmt"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/queue-scheduler/queue-scheduler/apis/config"
)

// Reservations turn on the Backfill plugin: the first waiting gangs get a reservation from the
// running pods' runtime bounds (the jobs' deadlines), and other pods backfill around them. Its
// durations are in simulated time, divided by the time scale for the scheduler, which runs on the
// real clock.
type Reservations struct {
	// MaxReservations is how many waiting gangs get one; the plugin's default when absent, 0 turns
	// the plugin off.
	MaxReservations *int32 `yaml:"maxReservations"`
	// Window is how far ahead a start is looked for; the plugin's default when absent.
	Window *Duration `yaml:"window"`
	// Resolution is the step the ends are rounded up to; the plugin's default when absent.
	Resolution *Duration `yaml:"resolution"`
	line       int
}

// UnmarshalYAML reads the section and remembers its line.
func (r *Reservations) UnmarshalYAML(n *yaml.Node) error {
	type plain Reservations
	r.line = n.Line
	return decodeStrict(n, (*plain)(r), "reservations")
}

func (r *Reservations) validate(p *problems) {
	if r == nil {
		return
	}
	if r.MaxReservations != nil && *r.MaxReservations < 0 {
		p.add(r.line, "reservations.maxReservations", "must not be negative, got %d", *r.MaxReservations)
	}
	if r.Window != nil && r.Resolution != nil && r.Window.Duration < r.Resolution.Duration {
		p.add(r.line, "reservations.window", "must be at least the resolution (%s), got %s", r.Resolution.Duration, r.Window.Duration)
	}
}

// On says whether the scenario runs the Backfill plugin.
func (r *Reservations) On() bool {
	return r != nil && (r.MaxReservations == nil || *r.MaxReservations > 0)
}

// NoReservations turns the reservations off, to play the same scenario without them.
func (s *Scenario) NoReservations() {
	if s.Reservations != nil {
		s.Reservations.MaxReservations = new(int32)
	}
}

// ReplanInterval is how often the Backfill plugin plans while gangs wait, in simulated time.
const ReplanInterval = 5 * time.Second

// profile adds the Backfill plugin and its args to profile, whose pluginConfig list is its last
// key, with every duration divided by scale (the resolution and the replan interval at least the
// plugin's least, 100ms), the lapse included: a gang has as much simulated time to start.
func (r *Reservations) profile(profile []byte, scale float64) []byte {
	if !r.On() {
		return profile
	}
	real := func(d time.Duration) string {
		return max(time.Duration(float64(d)/scale), 100*time.Millisecond).String()
	}
	window, resolution := config.DefaultReservationWindow, config.DefaultReservationResolution
	if r.Window != nil {
		window = r.Window.Duration
	}
	if r.Resolution != nil {
		resolution = r.Resolution.Duration
	}
	max := int32(config.DefaultMaxReservations)
	if r.MaxReservations != nil {
		max = *r.MaxReservations
	}
	out := bytes.Replace(profile, []byte("      - name: Gang\n"), []byte("      - name: Gang\n      - name: Backfill\n"), 1)
	return fmt.Appendf(out, `  - name: Backfill
    args:
      maxReservations: %d
      window: %q
      resolution: %q
      replanInterval: %q
      lapseAfter: %q
`, max, real(window), real(resolution), real(ReplanInterval), real(config.DefaultLapseAfter))
}
