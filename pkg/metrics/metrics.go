// Package metrics holds queue-scheduler's own metrics, registered through component-base in the
// process's legacy registry, so that they are served on the scheduler's /metrics beside
// kube-scheduler's. Every label is bounded by configuration (queues, resources, phases, actions,
// rules), never by pods. docs/metrics.md lists them.
package metrics

import (
	"time"

	v1 "k8s.io/api/core/v1"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// Namespace prefixes every metric of queue-scheduler.
const Namespace = "queue_scheduler"

// waitBuckets cover a pod's or a job's wait from a second to a day.
var waitBuckets = metrics.ExponentialBuckets(0.25, 2, 19)

var (
	// ReclaimEvictions counts the pods reclaim evicted for a queue from another queue.
	ReclaimEvictions = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: Namespace, Name: "reclaim_evictions_total", StabilityLevel: metrics.ALPHA,
		Help: "Pods evicted to give a queue back what another queue borrowed, by queue and victim queue.",
	}, []string{"queue", "victim_queue"})
	// Preemptions counts the pods preempted within their own queue for a higher-priority pod.
	Preemptions = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: Namespace, Name: "preemption_victims_total", StabilityLevel: metrics.ALPHA,
		Help: "Pods preempted for a higher-priority pod of the same queue, by queue.",
	}, []string{"queue"})
	// GangRejections counts the gangs whose waiting members were turned away at Permit.
	GangRejections = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: Namespace, Name: "gang_rejections_total", StabilityLevel: metrics.ALPHA,
		Help: "Gangs whose waiting members were rejected together, by queue and reason.",
	}, []string{"queue", "reason"})
	// GangTimeouts counts the gangs that did not gather minMember placements in time.
	GangTimeouts = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: Namespace, Name: "gang_timeouts_total", StabilityLevel: metrics.ALPHA,
		Help: "Gangs that timed out waiting for minMember members to be placed, by queue.",
	}, []string{"queue"})
	// Commands counts the Commands the controller handled.
	Commands = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: Namespace, Name: "commands_total", StabilityLevel: metrics.ALPHA,
		Help: "Commands handled, by action and result (Applied, Ignored, Rejected, Forbidden, QueueNotFound).",
	}, []string{"action", "result"})
	// AdmissionRefusals counts the requests the webhook refused.
	AdmissionRefusals = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: Namespace, Name: "admission_refusals_total", StabilityLevel: metrics.ALPHA,
		Help: "Requests refused by the admission webhook, by kind of object and rule (the field the refusal names).",
	}, []string{"kind", "rule"})
	// HeldPodReports counts the reports written for pods held before scheduling.
	HeldPodReports = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: Namespace, Name: "held_pod_reports_total", StabilityLevel: metrics.ALPHA,
		Help: "PodScheduled=False reports written for pods held before scheduling, by reason.",
	}, []string{"reason"})
	// PodGroupAdmissions counts the PodGroups admitted to their queue: out of Pending, to Inqueue or,
	// for a group that takes no room, straight to Running.
	PodGroupAdmissions = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: Namespace, Name: "podgroup_admissions_total", StabilityLevel: metrics.ALPHA,
		Help: "PodGroups admitted to their queue (out of Pending), by queue.",
	}, []string{"queue"})
	// ShareComputations counts the computations of the fair shares.
	ShareComputations = metrics.NewCounter(&metrics.CounterOpts{
		Namespace: Namespace, Name: "share_computations_total", StabilityLevel: metrics.ALPHA,
		Help: "Computations of every queue's deserved share.",
	})
	// ShareComputationDuration is how long one computation of the fair shares takes.
	ShareComputationDuration = metrics.NewHistogram(&metrics.HistogramOpts{
		Namespace: Namespace, Name: "share_computation_duration_seconds", StabilityLevel: metrics.ALPHA,
		Help:    "Time to compute every queue's deserved share once.",
		Buckets: metrics.ExponentialBuckets(0.0001, 2, 16),
	})
	// PodWait is the time from a pod's creation to its binding.
	PodWait = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Namespace: Namespace, Name: "pod_wait_seconds", StabilityLevel: metrics.ALPHA,
		Help:    "Time from a pod's creation to its binding, by queue.",
		Buckets: waitBuckets,
	}, []string{"queue"})
	// PodGroupTimeToRunning is the time from a PodGroup's creation to its Running phase.
	PodGroupTimeToRunning = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Namespace: Namespace, Name: "podgroup_time_to_running_seconds", StabilityLevel: metrics.ALPHA,
		Help:    "Time from a PodGroup's creation to its Running phase, by queue.",
		Buckets: waitBuckets,
	}, []string{"queue"})
	// QueueUnitTimeToDequeued is the time from a QueueUnit's creation to its dequeueing.
	QueueUnitTimeToDequeued = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Namespace: Namespace, Name: "queueunit_time_to_dequeued_seconds", StabilityLevel: metrics.ALPHA,
		Help:    "Time from a QueueUnit's creation to its dequeueing, by queue.",
		Buckets: waitBuckets,
	}, []string{"queue"})
	// Reservations is how many waiting gangs hold a reservation.
	Reservations = metrics.NewGauge(&metrics.GaugeOpts{
		Namespace: Namespace, Name: "reservations", StabilityLevel: metrics.ALPHA,
		Help: "Waiting gangs that hold a reservation (the Backfill plugin's last plan).",
	})
	// ReservedResources is the room the reservations hold, summed over nodes.
	ReservedResources = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Namespace: Namespace, Name: "reserved_resources", StabilityLevel: metrics.ALPHA,
		Help: "Room held by the reservations of waiting gangs, by resource (cpu in cores, memory in bytes).",
	}, []string{"resource"})
	// BackfilledPods counts the pods bound on room a reservation needs after they end.
	BackfilledPods = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace: Namespace, Name: "backfilled_pods_total", StabilityLevel: metrics.ALPHA,
		Help: "Pods bound on reserved room because their runtime bound ends before the reservation starts, by queue.",
	}, []string{"queue"})
	// ReservationPlanDuration is how long one plan of the reservations takes.
	ReservationPlanDuration = metrics.NewHistogram(&metrics.HistogramOpts{
		Namespace: Namespace, Name: "reservation_plan_duration_seconds", StabilityLevel: metrics.ALPHA,
		Help:    "Time to plan the reservations of the waiting gangs once.",
		Buckets: metrics.ExponentialBuckets(0.0001, 2, 16),
	})
)

// SetReservations reports a plan: how many reservations it holds and the room they hold, by
// resource in the plan's units (milli-cpu, bytes, whole units).
func SetReservations(count int, reserved map[v1.ResourceName]int64) {
	Reservations.Set(float64(count))
	ReservedResources.Reset()
	for name, amount := range reserved {
		value := float64(amount)
		if name == v1.ResourceCPU {
			value /= 1000
		}
		ReservedResources.WithLabelValues(string(name)).Set(value)
	}
}

// counted lists the metrics counted or observed as things happen; the per-queue gauges are computed
// at scrape time (queues.go).
var counted = []metrics.Registerable{ReclaimEvictions, Preemptions, GangRejections, GangTimeouts,
	Commands, AdmissionRefusals, HeldPodReports, PodGroupAdmissions, ShareComputations,
	ShareComputationDuration, PodWait, PodGroupTimeToRunning, QueueUnitTimeToDequeued,
	Reservations, ReservedResources, BackfilledPods, ReservationPlanDuration}

// The metrics are registered when the package is loaded, before any goroutine can count: a
// component-base metric is set up at registration, which must not race with its first use.
func init() {
	legacyregistry.MustRegister(counted...)
	legacyregistry.CustomMustRegister(queues)
}

// SinceCreation is the time since created, in seconds; never negative, so a skewed clock does not
// put an observation below every bucket.
func SinceCreation(created, now time.Time) float64 {
	if d := now.Sub(created); d > 0 {
		return d.Seconds()
	}
	return 0
}
