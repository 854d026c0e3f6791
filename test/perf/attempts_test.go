package perf

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/component-base/metrics/legacyregistry"
)

// countedFamilies are the counters a run reports the growth of, each with the labels it is told by
// (nil: all): the schedulers' attempts by profile and result, the gangs queue-scheduler rejected by
// reason, and the API server's writes by resource and response code.
var countedFamilies = map[string][]string{
	"scheduler_schedule_attempts_total":     nil,
	"queue_scheduler_gang_rejections_total": nil,
	"apiserver_request_total":               {"verb", "resource", "subresource", "code"},
}

// writeVerbs are the API server requests counted: those that write.
var writeVerbs = map[string]bool{"POST": true, "PUT": true, "PATCH": true, "DELETE": true}

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
		keep, ok := countedFamilies[f.GetName()]
		if !ok {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := make([]string, 0, len(m.GetLabel()))
			write := true
			for _, l := range m.GetLabel() {
				if l.GetName() == "verb" {
					write = writeVerbs[l.GetValue()]
				}
				if keep == nil || slices.Contains(keep, l.GetName()) {
					labels = append(labels, l.GetName()+"="+l.GetValue())
				}
			}
			if write {
				s[f.GetName()+"{"+strings.Join(labels, ",")+"}"] += m.GetCounter().GetValue()
			}
		}
	}
	return s
}

// queueStatusWrites is how many Queue status writes the API server took since before.
func (s counterSnapshot) queueStatusWrites(before counterSnapshot) float64 {
	n := 0.0
	for key, v := range s {
		if strings.HasPrefix(key, "apiserver_request_total{") && strings.Contains(key, "resource=queues,subresource=status,") {
			n += v - before[key]
		}
	}
	return n
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
