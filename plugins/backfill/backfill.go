// Package backfill is the scheduler plugin that keeps large gangs from starving: it plans, for the
// first waiting gangs in the scheduler's order, the earliest time their members fit from the
// running pods' runtime bounds and where (pkg/timeline), publishes the plan in the accounting, and
// lets another pod onto reserved room only if its own bound ends before the reservation starts, or
// it fits in what the reservations leave. It never evicts for a reservation.
package backfill

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/utils/clock"

	"github.com/queue-scheduler/queue-scheduler/apis/config"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/timeline"
)

// Name is the plugin's name in the scheduler configuration.
const Name = "Backfill"

// ReasonReserved is Filter's reason for a node whose room a reservation needs before the pod ends.
const ReasonReserved = "node(s) had room reserved for a waiting gang that starts before the pod's runtime bound ends"

// Backfill holds reservations for waiting gangs and backfills around them.
type Backfill struct {
	handle fwk.Handle
	acct   *accounting.Accounting
	// plans is where the plan is published, and read by the accounting's snapshots and the
	// controller.
	plans *accounting.StartPlans
	args  *config.BackfillArgs
	clock clock.PassiveClock

	// mu makes one planner or taker at a time; Filter reads the plan without it.
	mu sync.Mutex
	// planned is when the plan in the accounting was made.
	planned time.Time
	// refused are the pods Filter turned away since the last change of the reservations: they are
	// tried again when one is dropped, moved or shrunk.
	refused refusedPods
	// lapses hold the gangs whose reservations held free room without the gangs starting (lapse.go).
	lapses lapses
}

var (
	_ fwk.PreFilterPlugin   = &Backfill{}
	_ fwk.FilterPlugin      = &Backfill{}
	_ fwk.ReservePlugin     = &Backfill{}
	_ fwk.PostBindPlugin    = &Backfill{}
	_ fwk.EnqueueExtensions = &Backfill{}
)

// New builds the plugin on the scheduler's accounting, which the composition root (pkg/scheduler)
// hands it.
func New(ctx context.Context, obj runtime.Object, h fwk.Handle, acct *accounting.Accounting) (fwk.Plugin, error) {
	args, err := config.DecodeBackfill(obj)
	if err != nil {
		return nil, err
	}
	b := &Backfill{handle: h, acct: acct, plans: acct.StartPlans, args: args, clock: acct.Clock(), refused: refusedPods{pods: map[string]*v1.Pod{}},
		lapses: lapses{after: args.LapseAfter.Duration, most: min(lapseMost*args.LapseAfter.Duration, args.Window.Duration), set: map[string]lapse{}}}
	b.plans.Expect()
	acct.Events.Reservation.Subscribe(func(string) { b.refused.activate(h) })
	go b.runPrune(ctx, acct.Clock())
	return b, nil
}

// Name returns the plugin's name.
func (b *Backfill) Name() string { return Name }

// stateKey is where PreFilter leaves what Filter and Reserve read of the pod.
const stateKey fwk.StateKey = Name

// podState is the plan the cycle read, and the pod as the plan reads it.
type podState struct {
	plan *timeline.Plan
	pod  timeline.Pod
	// backfilled: Reserve placed the pod on room a reservation needs after the pod ends.
	backfilled bool
	// noted: a node turned the pod away, and the pod is among the refused.
	noted atomic.Bool
}

// Clone returns the state itself: Filter only reads it.
func (s *podState) Clone() fwk.StateData { return s }

// PreFilter plans again when the plan is due, and skips Filter for every node when no reservation
// is held.
func (b *Backfill) PreFilter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	b.replanIfDue(ctx, b.clock.Now())
	plan := b.plans.Latest()
	if plan.Empty() {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	// Never before the plan: a clock stepped back must not make a pod look gone earlier.
	state.Write(stateKey, &podState{plan: plan, pod: b.podOf(plan.Dims, pod, b.acct.Gangs.Key(pod), latest(b.clock.Now(), plan.At))})
	return nil, nil
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// PreFilterExtensions returns nil: a preemption dry run keeps the reservations as they are.
func (b *Backfill) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// Filter turns the pod away from a node whose room a reservation needs before the pod is gone. No
// eviction on the node can change that: the node is unresolvable for the pod.
func (b *Backfill) Filter(_ context.Context, state fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {
	s, ok := readState(state)
	if !ok {
		return nil
	}
	if guard := s.plan.Blocking(nodeInfo.Node().Name, s.pod); guard != nil {
		if !s.noted.Swap(true) {
			b.refused.add(pod)
		}
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, ReasonReserved)
	}
	return nil
}

// readState reads what PreFilter left; ok is false when it left nothing (no reservation is held).
func readState(state fwk.CycleState) (*podState, bool) {
	data, err := state.Read(stateKey)
	if err != nil {
		return nil, false
	}
	s, ok := data.(*podState)
	return s, ok
}

// refusedPods are the pods Filter turned away, by namespace/name.
type refusedPods struct {
	mu   sync.Mutex
	pods map[string]*v1.Pod
}

func (r *refusedPods) add(pod *v1.Pod) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pods[pod.Namespace+"/"+pod.Name] = pod
}

// forgetGone forgets the refused pods that no longer wait: deleted (or replaced), or bound since.
func (r *refusedPods) forgetGone(live corelisters.PodLister) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for key, pod := range r.pods {
		if now, err := live.Pods(pod.Namespace).Get(pod.Name); err != nil || now.UID != pod.UID || now.Spec.NodeName != "" {
			delete(r.pods, key)
		}
	}
}

// activate moves the refused pods back to the active queue, and forgets them.
func (r *refusedPods) activate(h fwk.Handle) {
	r.mu.Lock()
	pods := r.pods
	r.pods = map[string]*v1.Pod{}
	r.mu.Unlock()
	if len(pods) > 0 {
		h.Activate(klog.Background(), pods)
	}
}
