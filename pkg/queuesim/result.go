package queuesim

import (
	"fmt"
	"math"
	"sort"
	"time"

	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
)

// Sample is one queue at one moment.
type Sample struct {
	At        time.Duration `json:"at"`
	Queue     string        `json:"queue"`
	State     string        `json:"state"`
	Allocated float64       `json:"allocatedCPU"`
	Deserved  float64       `json:"deservedCPU"`
	Pending   int           `json:"pendingPods"`
	// Usage is the queue's decayed usage in simulated core-hours, as the live view says.
	Usage float64 `json:"usageCPUHours"`
}

// ActionRecord is an operator's action as it was carried out.
type ActionRecord struct {
	At   time.Duration `json:"at"`
	What string        `json:"what"`
}

// QueueResult is what one queue got over the scenario.
type QueueResult struct {
	Name string `json:"name"`
	// MeanAllocated and MeanDeserved are cpu averaged over the samples.
	MeanAllocated float64 `json:"meanAllocatedCPU"`
	MeanDeserved  float64 `json:"meanDeservedCPU"`
	// FinalAllocated and FinalDeserved are cpu at the last sample.
	FinalAllocated float64 `json:"finalAllocatedCPU"`
	FinalDeserved  float64 `json:"finalDeservedCPU"`
	// FinalUsage is the queue's decayed usage at the last sample, in simulated core-hours.
	FinalUsage float64 `json:"finalUsageCPUHours"`
	// WaitP50 and WaitP99 are from creation to binding, in simulated time.
	WaitP50 time.Duration `json:"waitP50"`
	WaitP99 time.Duration `json:"waitP99"`
	// Completed and Failed count the pods that ended; PerMinute is Completed per simulated minute.
	Completed int     `json:"completedPods"`
	Failed    int     `json:"failedPods"`
	PerMinute float64 `json:"completedPerMinute"`
	// Evictions counts the queue's pods evicted (by reclaim or preemption) before they ended.
	Evictions int `json:"evictions"`
	// GangWaitP99 is from a PodGroup's creation to its minMember-th member bound, in simulated time.
	GangWaitP99 time.Duration `json:"gangWaitP99,omitempty"`
	// GangsCompleted and GangsTimedOut count the queue's PodGroups.
	GangsCompleted int `json:"gangsCompleted"`
	GangsTimedOut  int `json:"gangsTimedOut"`
	// Deviation is the mean distance between allocated and deserved cpu, as a share of the cluster,
	// over the samples where the queue had work running or waiting.
	Deviation float64 `json:"deviation"`
}

// Result is a played scenario.
type Result struct {
	Scenario string         `json:"scenario"`
	Duration time.Duration  `json:"duration"`
	Capacity float64        `json:"capacityCPU"`
	Queues   []QueueResult  `json:"queues"`
	Actions  []ActionRecord `json:"actions"`
	// Utilisation is the mean share of the cluster's cpu held by running pods.
	Utilisation float64  `json:"utilisation"`
	Samples     []Sample `json:"samples"`
	// Gangs are the scenario's PodGroups, in order of creation, when it has a reservations section.
	Gangs []GangResult `json:"gangs,omitempty"`
	// Forecasts compares the expected starts with the actual ones, when the scenario checks them.
	Forecasts *ForecastAccuracy `json:"forecasts,omitempty"`
	// Snapshots are the forecast's snapshots the scenario took, saved in files of their own.
	Snapshots []TakenSnapshot `json:"-"`
}

// TakenSnapshot is the forecast's snapshot taken at a simulated moment, in simulated time.
type TakenSnapshot struct {
	At       time.Duration
	Snapshot *visibilityv1beta1.ForecastSnapshot
}

// File is the name of the snapshot's file in the output folder.
func (t TakenSnapshot) File() string { return fmt.Sprintf("snapshot-%s.yaml", t.At) }

// GangResult is what one PodGroup went through, in simulated time.
type GangResult struct {
	Name    string        `json:"name"`
	Queue   string        `json:"queue"`
	Created time.Duration `json:"created"`
	// Started is when minMember members were bound; Ran says whether that happened.
	Started time.Duration `json:"started"`
	Ran     bool          `json:"ran"`
	// FirstReservedStart is the start the gang's first reservation promised; Reserved says whether
	// it held one.
	FirstReservedStart time.Duration `json:"firstReservedStart"`
	Reserved           bool          `json:"reserved"`
	// UtilisationWhileWaiting is the cluster's utilisation over the samples from its creation to its
	// start (or the end).
	UtilisationWhileWaiting float64 `json:"utilisationWhileWaiting"`
}

// result sums the samples and the recorder's counts up per queue.
func (sim *simulation) result(s *Scenario, actions []ActionRecord) *Result {
	r := &Result{Scenario: s.Name, Duration: s.Duration.Duration, Capacity: sim.capacity, Actions: actions, Samples: sim.samples,
		Snapshots: sim.snapshots}
	byQueue := map[string][]Sample{}
	times := map[time.Duration]float64{}
	for _, smp := range sim.samples {
		byQueue[smp.Queue] = append(byQueue[smp.Queue], smp)
		times[smp.At] += smp.Allocated
	}
	for _, busy := range times {
		r.Utilisation += busy / sim.capacity / float64(len(times))
	}
	rec := sim.recorder
	rec.mu.Lock()
	defer rec.mu.Unlock()
	gangs := map[string][2]int{}
	for _, g := range rec.gangs {
		counts := gangs[g.queue]
		if g.completed {
			counts[0]++
		}
		if g.timedOut {
			counts[1]++
		}
		gangs[g.queue] = counts
	}
	if sim.reservations {
		r.Gangs = sim.gangResults(times)
	}
	if s.ForecastCheck.Duration > 0 || sim.forecastChecks > 0 {
		r.Forecasts = sim.forecastAccuracy(s.Duration.Duration, actions)
		r.Forecasts.KnownRuntimes = s.knownRuntimes
	}
	minutes := s.Duration.Minutes()
	for _, name := range sortedKeys(byQueue) {
		q := summarize(name, byQueue[name], sim.capacity)
		q.WaitP50, q.WaitP99 = percentile(rec.waits[name], 50), percentile(rec.waits[name], 99)
		q.Completed, q.Failed, q.Evictions = rec.completed[name], rec.failed[name], rec.evictions[name]
		q.PerMinute = float64(q.Completed) / minutes
		q.GangsCompleted, q.GangsTimedOut = gangs[name][0], gangs[name][1]
		q.GangWaitP99 = percentile(rec.gangWaits[name], 99)
		r.Queues = append(r.Queues, q)
	}
	return r
}

// gangResults are the recorder's gangs, oldest first; busy is the cpu held at each sample. Call with
// the recorder's lock held.
func (sim *simulation) gangResults(busy map[time.Duration]float64) []GangResult {
	var out []GangResult
	for key, g := range sim.recorder.gangs {
		res := GangResult{Name: key, Queue: g.queue, Created: g.created, Started: g.started, Ran: g.running,
			FirstReservedStart: g.firstStart, Reserved: g.reserved}
		n := 0
		for at, cpu := range busy {
			if at >= g.created && (!g.running || at <= g.started) {
				res.UtilisationWhileWaiting += cpu / sim.capacity
				n++
			}
		}
		if n > 0 {
			res.UtilisationWhileWaiting /= float64(n)
		}
		out = append(out, res)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Created != out[j].Created {
			return out[i].Created < out[j].Created
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// Gang returns the result of the PodGroup "namespace/name", or false.
func (r *Result) Gang(key string) (GangResult, bool) {
	for _, g := range r.Gangs {
		if g.Name == key {
			return g, true
		}
	}
	return GangResult{}, false
}

// summarize averages one queue's samples.
func summarize(name string, samples []Sample, capacity float64) QueueResult {
	q := QueueResult{Name: name}
	busy := 0
	for _, smp := range samples {
		q.MeanAllocated += smp.Allocated / float64(len(samples))
		q.MeanDeserved += smp.Deserved / float64(len(samples))
		if smp.Allocated > 0 || smp.Pending > 0 {
			q.Deviation += math.Abs(smp.Allocated-smp.Deserved) / capacity
			busy++
		}
	}
	if busy > 0 {
		q.Deviation /= float64(busy)
	}
	last := samples[len(samples)-1]
	q.FinalAllocated, q.FinalDeserved, q.FinalUsage = last.Allocated, last.Deserved, last.Usage
	return q
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Queue returns the result of the named queue, or false.
func (r *Result) Queue(name string) (QueueResult, bool) {
	for _, q := range r.Queues {
		if q.Name == name {
			return q, true
		}
	}
	return QueueResult{}, false
}
