package queuesim

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/queue-scheduler/queue-scheduler/apis/config"
)

// profileOf reads a scheduler profile's backoff and the args of each plugin of its one profile.
func profileOf(t *testing.T, raw []byte) (maxBackoff int, enabled []string, args map[string][]byte) {
	t.Helper()
	var cfg struct {
		PodMaxBackoffSeconds int `yaml:"podMaxBackoffSeconds"`
		Profiles             []struct {
			Plugins struct {
				MultiPoint struct {
					Enabled []struct{ Name string } `yaml:"enabled"`
				} `yaml:"multiPoint"`
			} `yaml:"plugins"`
			PluginConfig []struct {
				Name string         `yaml:"name"`
				Args map[string]any `yaml:"args"`
			} `yaml:"pluginConfig"`
		} `yaml:"profiles"`
	}
	if err := yaml.Unmarshal(raw, &cfg); err != nil || len(cfg.Profiles) != 1 {
		t.Fatalf("profile: %v, %d profiles:\n%s", err, len(cfg.Profiles), raw)
	}
	args = map[string][]byte{}
	for _, p := range cfg.Profiles[0].PluginConfig {
		if args[p.Name], _ = json.Marshal(p.Args); args[p.Name] == nil {
			t.Fatalf("args of %s", p.Name)
		}
	}
	for _, p := range cfg.Profiles[0].Plugins.MultiPoint.Enabled {
		enabled = append(enabled, p.Name)
	}
	return cfg.PodMaxBackoffSeconds, enabled, args
}

// The big-gang scenario runs the Backfill plugin on its clock: its durations and the Gang plugin's
// backoff are divided by the time scale; the jobs' deadlines too, in whole seconds. The scheduler's
// own backoffs keep their defaults, as its queue runs on the simulated clock. Without reservations,
// the plugin is not in the profile.
func TestScenarioProfileOnItsClock(t *testing.T) {
	s, err := Load("../../examples/scenarios/big-gang.yaml")
	if err != nil {
		t.Fatal(err)
	}
	backoff, enabled, args := profileOf(t, s.schedulerProfile())
	if backoff != 0 || !strings.Contains(strings.Join(enabled, ","), "Gang,Backfill") {
		t.Errorf("max backoff %d, plugins %v: want kube-scheduler's default and Backfill after Gang", backoff, enabled)
	}
	b, err := config.DecodeBackfill(&runtime.Unknown{Raw: args["Backfill"]})
	if err != nil {
		t.Fatal(err)
	}
	scale := time.Duration(s.TimeScale)
	if *b.MaxReservations != *s.Reservations.MaxReservations || b.Window.Duration != config.DefaultReservationWindow/scale ||
		b.Resolution.Duration != s.Reservations.Resolution.Duration/scale || b.LapseAfter.Duration != config.DefaultLapseAfter/scale {
		t.Errorf("Backfill args %+v: want the scenario's reservations, its window, resolution and lapse divided by %d", b, scale)
	}
	g, err := config.DecodeGang(&runtime.Unknown{Raw: args["Gang"]})
	if err != nil || g.PodGroupBackoff() != time.Second {
		t.Errorf("Gang args %+v, %v: want a backoff of 1 s", g, err)
	}
	for _, j := range s.Jobs {
		if j.Name == "a-long" {
			want := int64(math.Ceil(j.Deadline.Seconds() / s.TimeScale))
			if pod := j.pod("p", "a-long", true, s.TimeScale); pod.Spec.ActiveDeadlineSeconds == nil || *pod.Spec.ActiveDeadlineSeconds != want {
				t.Errorf("a-long's pods: activeDeadlineSeconds %v, want %s / %g = %d", pod.Spec.ActiveDeadlineSeconds, j.Deadline.Duration, s.TimeScale, want)
			}
		}
	}
	s.NoReservations()
	if _, enabled, _ := profileOf(t, s.schedulerProfile()); strings.Contains(strings.Join(enabled, ","), "Backfill") {
		t.Errorf("without reservations the plugins are %v", enabled)
	}
}
