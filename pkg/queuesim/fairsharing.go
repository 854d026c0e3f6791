package queuesim

import (
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/queue-scheduler/queue-scheduler/apis/config"
)

// FairSharing is the scheduler's usage history in the scenario's simulated time: the scheduler
// runs on the real clock, so its durations are the scenario's divided by the time scale (the usage
// the report shows is multiplied back). Left out, the shipped defaults hold, in simulated time.
type FairSharing struct {
	// UsageHalfLife is the time after which a cpu-second used counts half; "0s" keeps no usage.
	UsageHalfLife *Duration `yaml:"usageHalfLife"`
	// UsageFactor is how strongly usage moves the shares above the guarantees (0 to 10).
	UsageFactor float64 `yaml:"usageFactor"`
	// EntryCharge is how long a pod's requests count as used at once when it starts.
	EntryCharge *Duration `yaml:"entryCharge"`
	line        int
}

// UnmarshalYAML reads the section and remembers its line.
func (f *FairSharing) UnmarshalYAML(n *yaml.Node) error {
	type plain FairSharing
	f.line = n.Line
	return decodeStrict(n, (*plain)(f), "fairSharing")
}

func (f *FairSharing) validate(p *problems) {
	if f == nil {
		return
	}
	if !(f.UsageFactor >= 0 && f.UsageFactor <= config.MaxUsageFactor) {
		p.add(f.line, "fairSharing.usageFactor", "must be between 0 and %d, got %g", config.MaxUsageFactor, f.UsageFactor)
	}
	if f.UsageFactor > 0 && f.UsageHalfLife != nil && f.UsageHalfLife.Duration == 0 {
		p.add(f.line, "fairSharing.usageFactor", "must be 0 while usageHalfLife is 0s: no usage is kept")
	}
}

// args are the QueueState plugin's fairSharing args for a scenario played at scale: every duration
// divided by it, the checkpoint interval too (at least a second).
func (f *FairSharing) args(scale float64) map[string]any {
	real := func(d time.Duration) string { return (time.Duration(float64(d) / scale)).String() }
	halfLife, entry := config.DefaultUsageHalfLife, config.DefaultEntryCharge
	factor := 0.0
	if f != nil {
		if f.UsageHalfLife != nil {
			halfLife = f.UsageHalfLife.Duration
		}
		if f.EntryCharge != nil {
			entry = f.EntryCharge.Duration
		}
		factor = f.UsageFactor
	}
	checkpoint := max(time.Duration(float64(config.DefaultCheckpointInterval)/scale), time.Second)
	return map[string]any{"usageHalfLife": real(halfLife), "entryCharge": real(entry), "usageFactor": factor,
		"checkpointInterval": checkpoint.String()}
}
