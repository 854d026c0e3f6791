// Package reclaim is the scheduler plugin that takes resources back between queues. A pod of a queue
// below its deserved share may evict pods of reclaimable queues above theirs, lowest priority first,
// never taking a victim queue below its share (so the resources do not swing back) and never leaving
// a gang below minMember; within one queue, a pod may preempt lower-priority pods of the same queue
// as kube-scheduler's default preemption would. It is built on the framework's preemption
// Evaluator, and evicts through the Eviction API so that PodDisruptionBudgets hold.
package reclaim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	quota "k8s.io/apiserver/pkg/quota/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	corelisters "k8s.io/client-go/listers/core/v1"
	policylisters "k8s.io/client-go/listers/policy/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	"k8s.io/utils/clock"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/cycle"
	"github.com/queue-scheduler/queue-scheduler/pkg/gangs"
	"github.com/queue-scheduler/queue-scheduler/pkg/podindex"
	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
	"github.com/queue-scheduler/queue-scheduler/pkg/textout"
)

// Name is the plugin's name in the scheduler configuration.
const Name = "Reclaim"

// minCandidateNodes is how many nodes a dry run tries at least before it settles on the best.
const minCandidateNodes = 100

// Reclaim evicts pods for a pod that did not fit.
type Reclaim struct {
	handle    fwk.Handle
	acct      *accounting.Accounting
	evaluator *preemption.Evaluator
	// waiting holds the pods that did not try to evict because the shares were being recomputed.
	waiting *podindex.Index
	// inflight holds the victims chosen and not gone yet.
	inflight *inflight
	// attempts holds the gangs whose victims are on their way out; nominated, the pods nominated
	// to the room being freed for them.
	attempts  *gangs.Attempts
	nominated *nominated
	// preFilter runs the profile's PreFilter plugins for the members of a gang other than the pod
	// of the cycle; nil when the framework does not offer it, and then gangs preempt pod by pod.
	preFilter preFilterRunner
	pdbs      policylisters.PodDisruptionBudgetLister
	pods      corelisters.PodLister
	// clock is the accounting's: the time the attempts and the victims' grace are measured against.
	clock clock.PassiveClock
	// specsSeen is the version of the queues' specs (a snapshot's QueueSpecs) of the last look.
	specsSeen atomic.Int64
}

// refusedBucket holds the pods reclaim could not help, until a queue's spec changes what it may
// take (reclaimable, weight, guarantee, capability), or some queue's spare grows.
const refusedBucket = "refused"

var (
	_ fwk.PostFilterPlugin = &Reclaim{}
	_ preemption.Interface = &Reclaim{}
)

// New builds the plugin on the scheduler's accounting and the gangs' reclaims under way (which Gang
// reads), both of which the composition root (pkg/scheduler) hands it.
func New(ctx context.Context, _ runtime.Object, h fwk.Handle, acct *accounting.Accounting, attempts *gangs.Attempts) (fwk.Plugin, error) {
	r := &Reclaim{handle: h, acct: acct, waiting: podindex.New(), inflight: newInflight(acct.Clock()), attempts: attempts,
		nominated: newNominated(acct.Gangs.Key), clock: acct.Clock()}
	r.preFilter, _ = h.(preFilterRunner)
	r.pdbs = h.SharedInformerFactory().Policy().V1().PodDisruptionBudgets().Lister()
	r.pods = h.SharedInformerFactory().Core().V1().Pods().Lister()
	acct.Events.SpareGrown.SubscribeSignal(r.activateRefused)
	r.specsSeen.Store(acct.Snapshot().QueueSpecs)
	acct.Events.SharesComputed.SubscribeSignal(r.onSharesComputed)
	if err := r.waiting.ForgetOnBindOrDelete(h.SharedInformerFactory().Core().V1().Pods().Informer()); err != nil {
		return nil, err
	}
	executor := preemption.NewExecutor(h, feature.NewSchedulerFeaturesFromGates(utilfeature.DefaultFeatureGate))
	executor.PreemptPod = r.evict
	r.evaluator = preemption.NewEvaluator(Name, h, r, executor)
	return r, nil
}

// Name returns the plugin's name.
func (r *Reclaim) Name() string { return Name }

// activateRefused lets in the pods reclaim could not help: a queue holds more above its share than
// before, or a queue's spec changed, and there may be something to take back now. Without it they
// would wait for an unrelated event, as long as the pods above the share run.
func (r *Reclaim) activateRefused() {
	if pods := r.waiting.Take(refusedBucket); len(pods) > 0 {
		r.handle.Activate(klog.Background(), pods)
	}
}

// onSharesComputed brings back the pods reclaim could not help once the snapshots rest on new queue
// specs: a queue turned reclaimable, or a new weight, guarantee or capability, may let them take
// back what they could not. Shares computed on the specs of the last look change nothing here.
func (r *Reclaim) onSharesComputed() {
	if specs := r.acct.Snapshot().QueueSpecs; r.specsSeen.Swap(specs) != specs {
		r.activateRefused()
	}
}

// PostFilter looks for pods to evict so that pod fits: it first rules out, from the accounting
// alone, pods that may neither reclaim nor preempt, then lets the Evaluator dry-run the nodes.
func (r *Reclaim) PostFilter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, m fwk.NodeToStatusReader) (*fwk.PostFilterResult, *fwk.Status) {
	if g := r.gangOf(pod); g != nil && r.preFilter != nil {
		return r.postFilterGang(ctx, state, pod, m, g)
	}
	if v, ok := cycle.QueueVerdictOf(state); ok && v.Behind {
		// Older pods of its queue go first: they, not this one, may need room taken back.
		return nil, fwk.NewStatus(fwk.Unschedulable, "reclaim: older pods of the queue go first")
	}
	if node := r.roomLetInFor(ctx, state, pod); node != "" {
		r.waiting.Remove(pod)
		return nominating(node), fwk.NewStatus(fwk.Unschedulable, "reclaim: waiting for the scheduler to count the room freed on node "+node)
	}
	if refused(state) && r.inflight.ownStill(pod.UID, r.stillCounted) {
		// Its queue refused it on numbers that hold the victims of its last preemption, which the
		// scheduler's cache may have dropped already: a dry run would see neither them nor the room
		// they free, and take more. Proportion lets it in again when the accounting sees them go.
		return nil, fwk.NewStatus(fwk.Unschedulable, "reclaim: waiting for the victims of its last preemption to go")
	}
	// The plan reads the latest snapshot, the cycle's own unless something changed since PreFilter:
	// victims that left since must not count twice, as spare and as gone.
	snap := r.acct.Snapshot()
	if r.judgedOnOlder(state, snap) {
		return r.again(pod, fwk.Unschedulable)
	}
	p, why := r.newPlan(snap, pod, resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}))
	if p != nil && r.acct.ChangedSince(snap) && r.readsShares(state, snap, pod) {
		// A victim may have left the in-flight list for a snapshot that does not leave it out.
		return r.again(pod, fwk.Unschedulable)
	}
	// A pod nominated by an earlier cycle keeps its node while pods leave it: the shares count its
	// victims gone already, and may leave nothing more to take back.
	if p == nil && pod.Status.NominatedNodeName == "" {
		return r.refuse(state, snap, pod, why)
	}
	if node := r.roomBeingFreed(ctx, state, pod, m); node != "" {
		r.waiting.Remove(pod)
		if p != nil {
			r.nominated.set(pod, p.queue, node)
		}
		return nominating(node), fwk.NewStatus(fwk.Unschedulable, "reclaim: waiting for the pods leaving node "+node+" to make room")
	}
	if p == nil {
		return r.refuse(state, snap, pod, why)
	}
	r.waiting.Remove(pod)
	state.Write(planKey, p)
	result, status := r.evaluator.Preempt(ctx, state, pod, m)
	node := ""
	if status.IsSuccess() && result != nil && result.NominatingInfo != nil {
		node = result.NominatedNodeName
	}
	r.inflight.settle(pod.UID, node)
	// The Evaluator's result says whether the pod's nomination changes; without one it stands.
	if result != nil && result.Mode() == fwk.ModeOverride {
		r.nominated.set(pod, p.queue, result.NominatedNodeName)
	}
	if !status.IsSuccess() {
		r.setAside(pod, snap)
	}
	if msg := status.Message(); msg != "" {
		return result, fwk.NewStatus(status.Code(), "reclaim: "+msg)
	}
	return result, status
}

// readsShares says whether a plan for pod reads the fair shares, and so must wait for shares that
// include every change: to take back what another queue holds above its share, or, when the queue
// refused the pod (Proportion's verdict), to judge in the dry run what must be freed for it. A pod
// its queue admits, while no other queue holds anything reclaim could take, preempts within its
// queue on any shares: on a stale snapshot too, as new pods arriving all the time would otherwise
// turn it away again and again.
func (r *Reclaim) readsShares(state fwk.CycleState, snap *policy.Snapshot, pod *v1.Pod) bool {
	if refused(state) {
		return true
	}
	queue, err := r.acct.QueueOf(pod)
	return err != nil || !policy.NothingToReclaimBeside(snap, queue)
}

// judgedOnOlder says whether the queue refused the pod on a snapshot older than snap. The dry run
// measures what must be freed against that snapshot's numbers, and counts what each pod it takes
// off a node frees as the accounting counts it now: a pod gone since would free nothing, though the
// numbers still hold it, and one victim too many would go.
func (r *Reclaim) judgedOnOlder(state fwk.CycleState, snap *policy.Snapshot) bool {
	judged, taken := cycle.Taken(state)
	return refused(state) && taken && judged.Changes != snap.Changes
}

// refused says whether the pod's queue refused it (Proportion's verdict).
func refused(state fwk.CycleState) bool {
	v, ok := cycle.QueueVerdictOf(state)
	return ok && v.Refused
}

// newPlan gathers what the dry run needs to know of the queues for pod, or for the gang of pod
// when req is what its missing members request, or says why no eviction can help.
func (r *Reclaim) newPlan(snap *policy.Snapshot, pod *v1.Pod, req v1.ResourceList) (*plan, string) {
	queue, err := r.acct.QueueOf(pod)
	if err != nil {
		return nil, err.Error()
	}
	if q := snap.Queue(queue); q == nil || q.Suspended {
		return nil, fmt.Sprintf("queue %q is Suspended: its pods neither reclaim nor preempt", queue)
	}
	p := &plan{
		queue:    queue,
		priority: corev1helpers.PodPriority(pod),
		req:      req,
	}
	p.preempt = r.acct.Pods.HasBoundBelow(queue, p.priority)
	var evicting map[string]v1.ResourceList
	evicting, p.gangsEvicting, p.evicting = r.inflight.pending(r.victimState, r.acct.QueueOf, r.acct.Gangs.Key, r.handle.SnapshotSharedLister().NodeInfos())
	r.inflight.forgetOwn(r.stillCounted)
	// The queue's other pods and other gangs' members that reclaim made room for, not bound yet,
	// count as the queue's already.
	held := r.nominated.holding(queue, pod, r.pending)
	under := policy.UnderShare(snap, queue, quota.Add(p.req, held))
	if under {
		p.spare, p.remembered = map[string]v1.ResourceList{}, map[string]float64{}
		for q, spare := range policy.ReclaimableSpare(snap, queue) {
			if left := quota.RemoveZeros(quota.SubtractWithNonNegativeResult(spare, evicting[q])); len(left) > 0 {
				p.spare[q] = left
				p.remembered[q] = r.rememberedShare(snap, q)
			}
		}
	}
	switch {
	case p.preempt || len(p.spare) > 0:
		return p, ""
	case !under:
		return nil, atShare(snap.Queue(queue), p.req, held)
	}
	return nil, fmt.Sprintf("queue %q has no lower-priority pods to preempt, and no reclaimable queue holds more than its share that it could take back", queue)
}

// remembers says whether usage moves the shares (fairSharing.usageFactor above 0), and so which
// queue reclaim takes from first: with the factor at 0, reclaim is as it was without a history.
func (r *Reclaim) remembers() bool {
	h := r.acct.History.Settings()
	return h.Keeps() && h.Factor > 0
}

// rememberedShare is queue's policy.RememberedShare now; 0 unless usage moves the shares.
func (r *Reclaim) rememberedShare(snap *policy.Snapshot, queue string) float64 {
	if !r.remembers() {
		return 0
	}
	used, ok := r.acct.History.Remembered(queue)
	q, exists := r.acct.Store.Queue(queue)
	if !ok || !exists {
		return 0
	}
	return policy.RememberedShare(used.ResourceSeconds, snap.Capacity, q.Spec.Weight)
}

// atShare says why a queue may take back nothing more for req: what it holds, with what reclaim
// freed for its pods not bound yet, and req would be more than its deserved share.
func atShare(q *policy.Queue, req, held v1.ResourceList) string {
	holds := textout.Resources(within(q.Allocated, req))
	if freed := within(held, req); !quota.IsZero(freed) {
		holds += fmt.Sprintf(" (and reclaim freed %s for its pods not bound yet)", textout.Resources(freed))
	}
	return fmt.Sprintf("queue %q holds %s of its deserved share %s: with %s more it would hold more than its share, and reclaim takes back no more than that; it has no lower-priority pods to preempt",
		q.Name, holds, textout.Resources(within(q.Deserved, req)), textout.Resources(req))
}

// again turns the pod away, with code, and activates it, to be tried again on the latest snapshot
// once its backoff ends: the plan read one that something changed since (a victim that went could be
// counted twice, as spare and as gone, and one too many taken).
func (r *Reclaim) again(pod *v1.Pod, code fwk.Code) (*fwk.PostFilterResult, *fwk.Status) {
	r.handle.Activate(klog.Background(), map[string]*v1.Pod{pod.Namespace + "/" + pod.Name: pod})
	return nil, fwk.NewStatus(code, "reclaim: the queues changed while the pod was tried; it is tried again on them")
}

// pending says whether the accounting counts a pod that is neither bound nor assumed.
func (r *Reclaim) pending(pod *v1.Pod) bool {
	_, _, ok := r.acct.Holding(pod)
	return ok && !r.acct.Pods.Holds(pod)
}

// victimState says whether a victim under way has begun to go, as the accounting sees it: from that
// moment each snapshot's reclaimable spare leaves it out (what terminating pods hold is not spare),
// so a victim is counted either as under way or by the spare, never by neither. A
// victim preempted while it waited at Permit is no longer held: it went back to the queue.
func (r *Reclaim) victimState(pod *v1.Pod) victimState {
	switch {
	case r.acct.Pods.Leaving(pod):
		return victimLeaving
	case r.acct.Pods.Holds(pod):
		return victimHeld
	}
	return victimReleased
}

// GetOffsetAndNumCandidates starts the dry run at a random node and tries at least
// minCandidateNodes nodes, or a tenth of them.
func (r *Reclaim) GetOffsetAndNumCandidates(nodes int32) (int32, int32) {
	if nodes == 0 {
		return 0, 0
	}
	return rand.Int32N(nodes), min(nodes, max(minCandidateNodes, nodes/10))
}

// CandidatesToVictimsMap lists the victims of each candidate node.
func (r *Reclaim) CandidatesToVictimsMap(candidates []preemption.Candidate) map[string]*extenderv1.Victims {
	m := make(map[string]*extenderv1.Victims, len(candidates))
	for _, c := range candidates {
		m[c.Name()] = c.Victims()
	}
	return m
}

// PodEligibleToPreemptOthers refuses pods that must not evict, and pods whose earlier victims on the
// nominated node are still terminating: evicting more before they are gone would take too much.
func (r *Reclaim) PodEligibleToPreemptOthers(_ context.Context, pod *v1.Pod, nominatedNodeStatus *fwk.Status) (bool, string) {
	if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy == v1.PreemptNever {
		return false, "not eligible due to preemptionPolicy=Never"
	}
	node := pod.Status.NominatedNodeName
	if node == "" || nominatedNodeStatus.Code() == fwk.UnschedulableAndUnresolvable {
		return true, ""
	}
	if info, _ := r.handle.SnapshotSharedLister().NodeInfos().Get(node); info != nil {
		for _, p := range info.GetPods() {
			if p.GetPod().DeletionTimestamp != nil && p.GetPod().Spec.SchedulerName == schedulingv1beta1.SchedulerName {
				return false, "not eligible while a pod on the nominated node is terminating"
			}
		}
	}
	return true, ""
}

// stillCounted says whether the accounting counts a victim of a preemption settled at since against
// its queue (bound, or terminating), until gangs.AttemptSlack after its deletion was due (a
// finalizer, a lost node), as goingOn has it, or after since for one whose deletion never began (its
// eviction failed, or was not made).
func (r *Reclaim) stillCounted(victim *v1.Pod, since time.Time) bool {
	if !r.acct.Pods.Holds(victim) {
		return false
	}
	due := since
	if live, err := r.pods.Pods(victim.Namespace).Get(victim.Name); err == nil && live.UID == victim.UID && live.DeletionTimestamp != nil {
		due = live.DeletionTimestamp.Time
	}
	return leavingBy(due, r.clock.Now())
}

// within returns the amounts of list in the resources of req, zero where list has none.
func within(list, req v1.ResourceList) v1.ResourceList {
	out := make(v1.ResourceList, len(req))
	for name := range req {
		out[name] = list[name]
	}
	return out
}
