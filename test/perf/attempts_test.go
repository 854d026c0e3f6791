package perf

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/component-base/metrics/legacyregistry"
)

// countedFamilies are the counters a run reports the growth of: the schedulers' attempts by profile
// and result, and the gangs queue-scheduler rejected, by reason.
var countedFamilies = map[string]bool{
	"scheduler_schedule_attempts_total":     true,
	"queue_scheduler_gang_rejections_total": true,
}

// counterSnapshot holds the process's countedFamilies, one value a label set.
type counterSnapshot map[string]float64

// snapshotCounters reads countedFamilies from the process's metrics registry, which every
// in-process scheduler counts into, each attempt under its profile.
func snapshotCounters() counterSnapshot {
	s := counterSnapshot{}
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		return s
	}
	for _, f := range families {
		if !countedFamilies[f.GetName()] {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := make([]string, 0, len(m.GetLabel()))
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			s[f.GetName()+"{"+strings.Join(labels, ",")+"}"] += m.GetCounter().GetValue()
		}
	}
	return s
}

// since says how each counter grew from before, the ones that did only, in name order.
func (s counterSnapshot) since(before counterSnapshot) string {
	var grown []string
	for k, v := range s {
		if d := v - before[k]; d > 0 {
			grown = append(grown, fmt.Sprintf("%s +%.0f", k, d))
		}
	}
	sort.Strings(grown)
	if len(grown) == 0 {
		return "no counter grew"
	}
	return strings.Join(grown, "; ")
}
