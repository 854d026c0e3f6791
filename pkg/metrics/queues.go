package metrics

import (
	"slices"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-base/metrics"
)

// QueueSnapshot is what the per-queue gauges report of one queue, read at scrape time.
type QueueSnapshot struct {
	Name string
	// State is the queue's state as its status reports it (Open, Closing, Closed, Suspended,
	// Unknown).
	State  string
	Weight int32
	// Allocated, Pending and Deserved come from the accounting the scheduler decides with;
	// Capability and Guarantee from the queue's spec.
	Allocated, Pending, Deserved, Capability, Guarantee v1.ResourceList
	PendingPods, RunningPods                            int
	// PodGroups and QueueUnits count the queue's objects by phase.
	PodGroups, QueueUnits map[string]int
	// Usage is the queue's decayed usage (its own and the queues' below it), by resource, in
	// resource-seconds; EffectiveWeights the weights it gives the queue where they differ from its
	// own. Both nil without a usage history.
	Usage, EffectiveWeights map[v1.ResourceName]float64
}

// QueueSource lists the snapshots of every queue.
type QueueSource func() []QueueSnapshot

// States lists every state a queue reports, so that the state gauge has a series for each.
var States = []string{"Open", "Closing", "Closed", "Suspended", "Unknown"}

// queueCollector computes the per-queue gauges at scrape time from its source: nothing is kept per
// queue between scrapes, so a deleted queue's series go with it.
type queueCollector struct {
	metrics.BaseStableCollector

	mu sync.Mutex
	// sources are the live sources, latest last: the latest is read. A process has one scheduler's
	// accounting; a test process that runs a second one beside it, and stops it, reports the first
	// again.
	sources []*QueueSource
}

var queues = &queueCollector{}

func queueDesc(name, help string, labels ...string) *metrics.Desc {
	return metrics.NewDesc(Namespace+"_queue_"+name, help, append([]string{"queue"}, labels...), nil, metrics.ALPHA, "")
}

var (
	allocatedDesc  = queueDesc("allocated", "Resources requested by the queue's bound pods, by resource (cpu in cores, memory in bytes).", "resource")
	pendingDesc    = queueDesc("pending_requests", "Resources requested by the queue's pods not bound yet, by resource.", "resource")
	deservedDesc   = queueDesc("deserved", "The queue's deserved fair share, by resource.", "resource")
	capabilityDesc = queueDesc("capability", "The queue's capability (hard maximum), by resource; absent when unlimited.", "resource")
	guaranteeDesc  = queueDesc("guarantee", "The queue's guarantee (minimum), by resource.", "resource")
	shareDesc      = queueDesc("share", "Allocated divided by deserved, by resource; absent when nothing is deserved.", "resource")
	weightDesc     = queueDesc("weight", "The queue's weight in the fair share.")
	stateDesc      = queueDesc("state", "1 for the queue's current state, 0 for the others.", "state")
	pendingPods    = queueDesc("pending_pods", "The queue's live pods not bound yet.")
	runningPods    = queueDesc("running_pods", "The queue's bound pods.")
	podGroupsDesc  = queueDesc("podgroups", "The queue's PodGroups, by phase.", "phase")
	unitsDesc      = queueDesc("queueunits", "The queue's QueueUnits, by phase.", "phase")
	usageDesc      = queueDesc("usage_resource_seconds", "The queue's decayed usage with the queues below it, by resource: resource-seconds held, each counting half after the usage half-life; absent without a usage history.", "resource")
	effWeightDesc  = queueDesc("effective_weight", "The weight the queue's usage gives it among its siblings for what is left above the guarantees, by resource; absent where it is the queue's own weight.", "resource")
)

// PodGroupPhases and QueueUnitPhases list the phases the object gauges always report, zeros included.
var (
	PodGroupPhases  = []string{"Pending", "Inqueue", "Running", "Completed", "Unknown"}
	QueueUnitPhases = []string{"Enqueued", "Dequeued"}
)

// SetQueueSource makes source the one the per-queue gauges read, and returns the function that
// removes it again; the source set before it is then read again.
func SetQueueSource(source QueueSource) (unset func()) {
	return queues.add(source)
}

func (c *queueCollector) add(source QueueSource) (remove func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	mine := &source
	c.sources = append(c.sources, mine)
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.sources = slices.DeleteFunc(c.sources, func(s *QueueSource) bool { return s == mine })
	}
}

// source is the latest live source, or nil.
func (c *queueCollector) source() QueueSource {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.sources) == 0 {
		return nil
	}
	return *c.sources[len(c.sources)-1]
}

func (c *queueCollector) DescribeWithStability(ch chan<- *metrics.Desc) {
	for _, d := range []*metrics.Desc{allocatedDesc, pendingDesc, deservedDesc, capabilityDesc, guaranteeDesc,
		shareDesc, weightDesc, stateDesc, pendingPods, runningPods, podGroupsDesc, unitsDesc, usageDesc, effWeightDesc} {
		ch <- d
	}
}

func (c *queueCollector) CollectWithStability(ch chan<- metrics.Metric) {
	source := c.source()
	if source == nil {
		return
	}
	for _, q := range source() {
		collectQueue(ch, q)
	}
}

func collectQueue(ch chan<- metrics.Metric, q QueueSnapshot) {
	gauge := func(d *metrics.Desc, v float64, labels ...string) {
		ch <- metrics.NewLazyConstMetric(d, metrics.GaugeValue, v, append([]string{q.Name}, labels...)...)
	}
	for d, list := range map[*metrics.Desc]v1.ResourceList{
		allocatedDesc: q.Allocated, pendingDesc: q.Pending, deservedDesc: q.Deserved,
		capabilityDesc: q.Capability, guaranteeDesc: q.Guarantee,
	} {
		for name, quantity := range list {
			gauge(d, quantity.AsApproximateFloat64(), string(name))
		}
	}
	for name, d := range q.Deserved {
		if deserved := d.AsApproximateFloat64(); deserved > 0 {
			allocated := q.Allocated[name]
			gauge(shareDesc, allocated.AsApproximateFloat64()/deserved, string(name))
		}
	}
	gauge(weightDesc, float64(q.Weight))
	for _, s := range States {
		gauge(stateDesc, boolValue(s == q.State), s)
	}
	gauge(pendingPods, float64(q.PendingPods))
	gauge(runningPods, float64(q.RunningPods))
	for _, phase := range PodGroupPhases {
		gauge(podGroupsDesc, float64(q.PodGroups[phase]), phase)
	}
	for _, phase := range QueueUnitPhases {
		gauge(unitsDesc, float64(q.QueueUnits[phase]), phase)
	}
	for name, v := range q.Usage {
		gauge(usageDesc, v, string(name))
	}
	for name, v := range q.EffectiveWeights {
		gauge(effWeightDesc, v, string(name))
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
