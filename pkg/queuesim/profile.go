package queuesim

import (
	"bytes"
	"fmt"
	"math"
	"time"

	"github.com/queue-scheduler/queue-scheduler/apis/config"
	"github.com/queue-scheduler/queue-scheduler/manifests"
)

// schedulerProfile is the shipped profile on the scenario's clock: the Gang plugin's backoff divided
// by the time scale (whole seconds, at least one), the forecast's resolution, default runtime and
// interval, the usage history, and the reservations. kube-scheduler's own backoffs keep their
// defaults: its queue runs on the simulated clock (newQueueClock).
func (s *Scenario) schedulerProfile() []byte {
	seconds := func(d time.Duration) int { return max(1, int(math.Round(d.Seconds()/s.TimeScale))) }
	profile := bytes.Clone(manifests.SchedulerConfig)
	args := s.FairSharing.args(s.TimeScale)
	profile = fmt.Appendf(profile, `  pluginConfig:
  - name: QueueState
    args:
      controller:
        forecastResolution: %q
        forecastDefaultRuntime: %q
        forecastInterval: %q
      fairSharing:
        usageHalfLife: %q
        entryCharge: %q
        usageFactor: %g
        checkpointInterval: %q
  - name: Gang
    args:
      podGroupBackoffSeconds: %d
`, s.forecastResolution(), s.forecastDefaultRuntime(), s.forecastInterval(), args["usageHalfLife"], args["entryCharge"], args["usageFactor"], args["checkpointInterval"], seconds(config.DefaultPodGroupBackoff))
	return s.Reservations.profile(profile, s.TimeScale)
}

// forecastResolution, forecastDefaultRuntime and forecastInterval are the forecast's default step
// (10 simulated seconds), runtime (a simulated hour) and interval (10 simulated seconds) on the real
// clock: at least 100ms, 1s and 1s.
func (s *Scenario) forecastResolution() string {
	return max(time.Duration(float64(config.DefaultForecastResolution)/s.TimeScale), 100*time.Millisecond).String()
}

func (s *Scenario) forecastDefaultRuntime() string {
	return max(time.Duration(float64(config.DefaultForecastRuntime)/s.TimeScale), time.Second).Round(time.Millisecond).String()
}

func (s *Scenario) forecastInterval() string {
	return max(time.Duration(float64(config.DefaultForecastInterval)/s.TimeScale), time.Second).Round(time.Millisecond).String()
}
