// Package readmodel is what queue-scheduler tells of its queues beyond their objects, computed from
// the accounting on demand: the live view's summaries and pending work, the forecast of when pending
// work starts, the what-if, and the runtimes learned from finished work. The live view serves it
// (it implements visibility.Source), and the controller writes the parts that go into statuses
// (expected starts, the runtimes' checkpoints) from it. It writes nothing to the API server.
package readmodel

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/clock"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
)

// Consumers reads the jobs QueueUnits queue from the cache that watches them.
type Consumers interface {
	// Cached is the consumer ref names in namespace when its kind is watched already and it
	// exists, else nil; it never starts a watch.
	Cached(namespace string, ref corev1.ObjectReference) *unstructured.Unstructured
}

// Model is the read model of one scheduler's queues, on its accounting.
type Model struct {
	acct *accounting.Accounting
	// clock is the accounting's.
	clock clock.PassiveClock
	// consumers reads the jobs of QueueUnits (their bounds); nil reads none.
	consumers Consumers
	// forecast is the last forecast of the pending work's starts, and what it learned of runtimes.
	forecast forecaster
}

// New is the read model on acct: forecasts configures its forecasts, consumers (nil for none) reads
// the jobs QueueUnits queue.
func New(acct *accounting.Accounting, forecasts ForecastSettings, consumers Consumers) *Model {
	return &Model{acct: acct, clock: acct.Clock(), consumers: consumers, forecast: forecaster{settings: forecasts}}
}

// WorkCounts are a queue's PodGroups by phase and its QueueUnits by phase.
type WorkCounts struct {
	Pending, Inqueue, Running, Completed, Unknown int32
	Enqueued, Dequeued                            int32
}

// WorkCounts counts the queue's PodGroups and QueueUnits by phase, from the caches.
func (m *Model) WorkCounts(queue string) WorkCounts {
	var w WorkCounts
	for _, pg := range m.acct.Store.PodGroupsOf(queue) {
		switch pg.Status.Phase {
		case schedulingv1beta1.PodGroupInqueue:
			w.Inqueue++
		case schedulingv1beta1.PodGroupRunning:
			w.Running++
		case schedulingv1beta1.PodGroupCompleted:
			w.Completed++
		case schedulingv1beta1.PodGroupUnknown:
			w.Unknown++
		default:
			w.Pending++
		}
	}
	for _, u := range m.acct.Store.QueueUnitsOf(queue) {
		if u.Dequeued() {
			w.Dequeued++
		} else {
			w.Enqueued++
		}
	}
	return w
}
