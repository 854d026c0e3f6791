// Package proportion is the scheduler plugin that shares the cluster between queues: a pod is
// scheduled only while its queue (and every ancestor) stays within capability, and its queue is
// below its deserved fair share, or the pod only borrows what is idle and claimed by no queue below
// its share. Reserve and Unreserve keep the shared accounting ahead of the informers.
package proportion

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/utils/clock"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/cycle"
	"github.com/queue-scheduler/queue-scheduler/pkg/holdreport"
	"github.com/queue-scheduler/queue-scheduler/pkg/metrics"
	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
)

// Name is the plugin's name in the scheduler configuration.
const Name = "Proportion"

// changedBucket holds the pods whose queue the snapshot had Suspended a moment after its informer's
// store had it schedule: the next snapshot, built on the accounting's handling of the change, lets
// them in.
const changedBucket = "\x00queue-changed"

// Proportion enforces capabilities and fair shares. Its Holder indexes the pods it turned away, at
// PreEnqueue or PreFilter, by their queue (or by a change of it on its way), and reports the pods it
// holds before scheduling.
type Proportion struct {
	acct *accounting.Accounting
	*holdreport.Holder
	// line keeps the pods that wait for room, to be tried first when room frees; pods reads them.
	line *line
	pods corelisters.PodLister
	// clock times the line's holds; the accounting's clock.
	clock clock.PassiveClock
}

var (
	_ fwk.PreEnqueuePlugin  = &Proportion{}
	_ fwk.PreFilterPlugin   = &Proportion{}
	_ fwk.FilterPlugin      = &Proportion{}
	_ fwk.ReservePlugin     = &Proportion{}
	_ fwk.PostBindPlugin    = &Proportion{}
	_ fwk.EnqueueExtensions = &Proportion{}
)

// New builds the plugin on the scheduler's accounting, which the composition root (pkg/scheduler)
// hands it.
func New(ctx context.Context, _ runtime.Object, h fwk.Handle, acct *accounting.Accounting) (fwk.Plugin, error) {
	holder, err := holdreport.NewHolder(ctx, h, acct.Clock())
	if err != nil {
		return nil, err
	}
	pods := h.SharedInformerFactory().Core().V1().Pods()
	p := &Proportion{acct: acct, Holder: holder, line: newLine(), pods: pods.Lister(), clock: acct.Clock()}
	if err := holdreport.OnPodDone(pods.Informer(), p.line.remove); err != nil {
		return nil, err
	}
	// A larger share lets in the pods that waited for it; shares computed on a queue's change, those
	// that waited for the snapshot to see it.
	acct.Events.Deserved.Subscribe(p.Activate)
	acct.Events.SharesComputed.SubscribeSignal(p.letInChanged)
	// Room freed in a queue lets in the pods it turned away at its share, and the first pods of each
	// queue that found no room.
	acct.Events.RoomFreed.Subscribe(p.onRoomFreed)
	// A reservation made or moved may let pods that end before it starts borrow its gang's claim.
	acct.Events.Reservation.Subscribe(func(string) { p.activateAll() })
	// Admitted work that is deleted or runs gives back what it reserved in its queue and the queues
	// above it.
	acct.Events.WorkReleased.Subscribe(p.onWorkReleased)
	// A queue's new capability, weight or guarantee changes what it and the queues below it may take.
	if _, err := acct.Store.QueueInformer().AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: p.onQueueUpdate}); err != nil {
		return nil, err
	}
	return p, nil
}

// onQueueUpdate brings back the rejected pods of a queue whose spec changed, and of the queues below
// it; status writes, which are most queue updates, change nothing this plugin checks.
func (p *Proportion) onQueueUpdate(oldObj, obj any) {
	old, okOld := oldObj.(*schedulingv1beta1.Queue)
	q, ok := obj.(*schedulingv1beta1.Queue)
	if okOld && ok && old.Generation != q.Generation {
		p.activateQueues(p.acct.Store.Subtree(q.Name))
	}
}

// onWorkReleased brings back the rejected pods of the tree of a queue whose admitted work gave back
// room it reserved (deleted, or a PodGroup past Inqueue): the reservation counted against the
// queue's capability and every capability above it, which the pods of every queue below them
// count, so pods of any queue of the tree may fit now. Without it, a pod held at a capability for
// admitted work would wait for an unrelated event.
func (p *Proportion) onWorkReleased(queue string) { p.activateQueues(p.acct.Store.TreeOf(queue)) }

// activateAll brings back the rejected pods of every queue.
func (p *Proportion) activateAll() { p.activateQueues(p.acct.Store.QueueNames()) }

// activateQueues brings back the rejected pods of the queues named.
func (p *Proportion) activateQueues(queues []string) {
	for _, q := range queues {
		p.Activate(q)
	}
}

// Name returns the plugin's name.
func (p *Proportion) Name() string { return Name }

// PreFilter rejects a pod whose queue may not take more now; the message names the queue and the
// resource. The rejection is resolvable: evicting lower-priority pods of the same queue can make room
// (the Filter below checks it during the preemption dry run); taking resources from other queues is
// reclaim's job.
func (p *Proportion) PreFilter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	queue, err := p.acct.QueueOf(pod)
	if err != nil {
		return nil, nil // QueueState holds pods whose queue is unknown.
	}
	req := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	// Indexed before the snapshot is taken, so that a larger share or room freed after it finds the
	// pod. The cycle's snapshot is taken here: Gang only reads one if taken (cycle.Taken).
	p.Held.Add(pod, queue)
	p.acct.Pods.Count(pod)
	snap := cycle.Snapshot(state, p.acct.Snapshot)
	refusal := p.acct.AdmitPod(snap, pod, queue, req)
	gang := p.acct.Gangs.Key(pod) != ""
	var letIn cycle.LetIn
	if !gang {
		t := p.line.tried(pod, queue, p.clock.Now(), p.acct.Pods.RoomFreedSeq(), refusal == nil)
		if len(t.release) > 0 && p.Activator != nil {
			// The pods that gave way to this one come next: the room is theirs if it does not take it.
			p.Activator(klog.FromContext(ctx), t.release)
		}
		letIn = t.letIn
		if refusal == nil && t.ahead {
			// Older pods of the queue were let in for the room that freed: it is theirs.
			refusal = policy.BehindLetIn(queue)
		}
	}
	s := &cycleState{queue: queue, refusal: refusal}
	state.Write(stateKey, s)
	p.waitForRoom(pod, queue, gang, req)
	if refusal == nil {
		p.Held.Remove(pod)
		if letIn.Node != "" {
			// Should the scheduler's snapshot not count that room yet, Reclaim holds it for the pod.
			cycle.SetLetIn(state, letIn)
		}
		// Filter has nothing to check for an admitted pod: Skip spares it on every node.
		return nil, fwk.NewStatus(fwk.Skip)
	}
	cycle.SetQueueVerdict(state, cycle.QueueVerdict{Refused: true, Message: refusal.Message, Behind: refusal.Behind})
	s.headroom, s.freed = p.acct.HeadroomOf(snap, queue, p.acct.PodWork(pod), req), policy.Amounts{}
	klog.FromContext(ctx).V(5).Info("Queue share exhausted", "pod", klog.KObj(pod), "reason", refusal.Message)
	if refusal.ExceedsCapability {
		// No eviction makes room for a request larger than the capability itself.
		return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, refusal.Message)
	}
	return nil, fwk.NewStatus(fwk.Unschedulable, refusal.Message)
}

// letInChanged lets in the pods held while the snapshot had their queue Suspended: shares were
// computed, on the queue's change among others.
func (p *Proportion) letInChanged() { p.Activate(changedBucket) }

// Filter runs only for a pod PreFilter refused (an admitted pod skips it), that is in a preemption
// dry run, where the queue's pods taken off the node free their share: the pod passes once that is
// enough. It compares the freed amounts with the headroom PreFilter computed; the message is
// PreFilter's.
func (p *Proportion) Filter(_ context.Context, state fwk.CycleState, _ *v1.Pod, _ fwk.NodeInfo) *fwk.Status {
	s, err := readState(state)
	if err != nil || s.refusal == nil || s.headroom.Fits(s.freed) {
		return nil
	}
	return fwk.NewStatus(fwk.Unschedulable, s.refusal.Message)
}

// PreFilterExtensions keeps track, during a preemption dry run, of what the pod's queue would free.
func (p *Proportion) PreFilterExtensions() fwk.PreFilterExtensions { return p }

// AddPod counts a pod of the same queue put back on a node as holding its share again.
func (p *Proportion) AddPod(_ context.Context, state fwk.CycleState, _ *v1.Pod, added fwk.PodInfo, _ fwk.NodeInfo) *fwk.Status {
	return p.shift(state, added.GetPod(), -1)
}

// RemovePod counts a pod of the same queue taken off a node as freeing its share.
func (p *Proportion) RemovePod(_ context.Context, state fwk.CycleState, _ *v1.Pod, removed fwk.PodInfo, _ fwk.NodeInfo) *fwk.Status {
	return p.shift(state, removed.GetPod(), 1)
}

func (p *Proportion) shift(state fwk.CycleState, other *v1.Pod, sign int64) *fwk.Status {
	s, err := readState(state)
	if err != nil || s.refusal == nil {
		return nil // PreFilter left no verdict (the pod has no queue), or admitted the pod.
	}
	// The accounting counts pending pods too: a gang's member a dry run placed before this one takes
	// its queue's room as a bound pod does.
	if q, requests, ok := p.acct.Holding(other); ok && q == s.queue {
		s.freed.Add(requests, sign)
	}
	return nil
}

// Reserve counts the pod against its queue at once, so the next pods in this cycle see it.
func (p *Proportion) Reserve(_ context.Context, _ fwk.CycleState, pod *v1.Pod, _ string) *fwk.Status {
	p.line.remove(pod)
	p.acct.Pods.Assume(pod)
	return nil
}

// Unreserve gives the pod's resources back when it was not bound.
func (p *Proportion) Unreserve(_ context.Context, _ fwk.CycleState, pod *v1.Pod, _ string) {
	p.acct.Pods.Forget(pod)
}

// PostBind records the pod's wait, from its creation to its binding, under its queue.
func (p *Proportion) PostBind(_ context.Context, _ fwk.CycleState, pod *v1.Pod, _ string) {
	if queue, err := p.acct.QueueOf(pod); err == nil {
		metrics.PodWait.WithLabelValues(queue).Observe(metrics.SinceCreation(pod.CreationTimestamp.Time, p.acct.Clock().Now()))
	}
}
