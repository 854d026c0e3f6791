package gang

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/cycle"
	"github.com/queue-scheduler/queue-scheduler/pkg/gangs"
	"github.com/queue-scheduler/queue-scheduler/pkg/metrics"
	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
)

// PreFilter turns away a gang member whose gang has fewer than minMember pods left.
func (g *Gang) PreFilter(_ context.Context, state fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	pg := g.podGroup(pod)
	if pg == nil {
		return nil, nil
	}
	key := g.acct.Gangs.Key(pod)
	g.members.attempt(key, g.sharesOf(state).QueueSpecs)
	if message := g.gateMessage(pg, key); message != "" {
		return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, message)
	}
	if g.members.isDenied(key) && g.members.count(key).assignedLack(pg) != "" {
		g.held.Add(pod, deniedBucket(key))
		return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable,
			fmt.Sprintf("podgroup %s was rejected: its members wait until a pod leaves a node or a node is added", key))
	}
	return nil, nil
}

// sharesOf is the snapshot the cycle's decisions rest on: the cycle's, or, when Gang's PreFilter
// runs before Proportion's in the profile, the latest, left for Proportion to take after it indexed
// its pod. An older one than Proportion's only voids a denial sooner.
func (g *Gang) sharesOf(state fwk.CycleState) *policy.Snapshot {
	if snap, ok := cycle.Taken(state); ok {
		return snap
	}
	return g.acct.Snapshot()
}

// deny holds the gang key back until room is freed, a queue's spec changes or the args' backoff
// passed, then brings its members back.
func (g *Gang) deny(key string) {
	backoff := g.args.PodGroupBackoff()
	g.members.deny(key, backoff)
	// The check runs apart from the timer's callback, which a clock may call holding its own lock.
	g.clock.AfterFunc(backoff, func() { go g.retryLapsed(key) })
}

// retryLapsed brings back the members of gang key turned away while it was denied, once the denial
// has lapsed.
func (g *Gang) retryLapsed(key string) {
	if pods := g.held.Pods(deniedBucket(key)); len(pods) > 0 && !g.members.isDenied(key) {
		g.handle.Activate(klog.Background(), pods)
	}
}

// deniedBucket holds the members turned away because their gang was rejected.
func deniedBucket(key string) string { return "denied/" + key }

// PreFilterExtensions is nil: the gang check does not depend on the pods of a node.
func (g *Gang) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// Reserve assumes the member in the accounting's pod table, where Permit counts it: the one record
// of reservations, which Proportion's Reserve writes too (assuming a pod twice is assuming it once).
func (g *Gang) Reserve(_ context.Context, _ fwk.CycleState, pod *v1.Pod, _ string) *fwk.Status {
	if g.acct.Gangs.Key(pod) != "" {
		g.acct.Pods.Assume(pod)
	}
	return nil
}

// Unreserve gives up a member's reservation. A member given up for its own sake (its wait timed
// out, or a later plugin failed) takes its waiting siblings with it: no partial gang is bound. The
// pod-group cycle of kube-scheduler (native PodGroups) reserves each member tentatively and gives
// every reservation up at the end of its placement, placed or not: the members it then binds are
// reserved again, and a placement that failed is rejected in PodGroupPostFilter.
func (g *Gang) Unreserve(ctx context.Context, state fwk.CycleState, pod *v1.Pod, _ string) {
	key := g.acct.Gangs.Key(pod)
	if key == "" {
		return
	}
	// Unreserve runs in the reverse order of Reserve: the member leaves the count before its siblings
	// are rejected and the failure is reported, not at Proportion's Unreserve after them.
	g.acct.Pods.Forget(pod)
	bySibling, deadline := g.members.release(pod.UID)
	if state != nil && state.IsPodGroupSchedulingCycle() {
		return
	}
	pg := g.podGroup(pod)
	if bySibling || pg == nil || !gangs.IsGang(pg) {
		return
	}
	reason, cause := fmt.Sprintf("member %s was not bound", pod.Name), "MemberNotBound"
	if !g.attempts.Reclaiming(key) {
		// A gang whose reclaim is under way is not denied: its members come back at once to the room
		// being freed, rather than waiting out the denial.
		g.held.Add(pod, deniedBucket(key))
		g.deny(key)
	}
	if !deadline.IsZero() && !g.clock.Now().Before(deadline) {
		reason, cause = fmt.Sprintf("timed out after %s waiting for %d members", g.timeout(pg), pg.MinMemberOrOne()), "Timeout"
	}
	g.countRejection(pod, cause)
	if rejected := g.rejectWaiting(key, reason); rejected > 0 {
		klog.FromContext(ctx).V(3).Info("Gang member given up; waiting siblings rejected", "pod", klog.KObj(pod), "rejected", rejected, "reason", reason)
	}
	g.reportFailure(pg, key, reason)
}

// Permit lets a member bind once minMember members of its gang are bound or reserved, and then lets
// its waiting siblings go too; until then it waits, at most the gang's schedule timeout.
func (g *Gang) Permit(_ context.Context, _ fwk.CycleState, pod *v1.Pod, _ string) (*fwk.Status, time.Duration) {
	pg := g.podGroup(pod)
	if pg == nil || !gangs.IsGang(pg) || pg.Status.Phase == schedulingv1beta1.PodGroupRunning {
		return nil, 0
	}
	key := g.acct.Gangs.Key(pod)
	lack := g.members.count(key).assignedLack(pg)
	if lack == "" {
		g.allowWaiting(key)
		return nil, 0
	}
	timeout := g.timeout(pg)
	g.members.waiting(pod.UID, g.clock.Now().Add(timeout))
	return fwk.NewStatus(fwk.Wait, fmt.Sprintf("waiting for the gang: podgroup %s has %s reserved", key, lack)), timeout
}

func (g *Gang) timeout(pg *schedulingv1beta1.PodGroup) time.Duration {
	if s := pg.Spec.ScheduleTimeoutSeconds; s != nil && *s > 0 {
		return time.Duration(*s) * time.Second
	}
	return g.args.ScheduleTimeout()
}

// PostFilter runs when a member could not be placed and nothing was preempted for it: unless its
// gang already has minMember assigned, the siblings waiting at Permit are rejected so that they
// release what they reserved.
func (g *Gang) PostFilter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, m fwk.NodeToStatusReader) (*fwk.PostFilterResult, *fwk.Status) {
	why := func() string { return withRefusal(g.fitSummary(m, state), state) }
	return nil, g.rejectGang(ctx, pod, why)
}

// PodGroupPostFilter runs when kube-scheduler's pod-group cycle could not place a native gang and
// Reclaim found nothing to evict for it: there the members' PostFilter does not run, and the group
// is rejected, denied and reported here as PostFilter does for a gang of any other API.
func (g *Gang) PodGroupPostFilter(ctx context.Context, state fwk.PodGroupCycleState, info fwk.PodGroupInfo,
	_ fwk.PodGroupSchedulingFunc) (*fwk.PodGroupPostFilterResult, *fwk.Status) {
	pods := info.GetUnscheduledPods()
	if len(pods) == 0 {
		return nil, fwk.NewStatus(fwk.Unschedulable)
	}
	why := func() string {
		return withRefusal(fmt.Sprintf("the pod-group cycle could not place its %d unscheduled members together", len(pods)), state)
	}
	return nil, g.rejectGang(ctx, pods[0], why)
}

// withRefusal adds to reason why Reclaim, which ran before, could not help the gang.
func withRefusal(reason string, state cycle.Reader) string {
	if why, ok := cycle.ReclaimRefusal(state); ok {
		return reason + "; reclaim cannot help: " + why
	}
	return reason
}

// rejectGang turns away the gang of pod, a member that could not be placed: the siblings waiting at
// Permit are rejected, the gang is denied until room is freed, and why() it failed is counted and
// reported. A gang that has minMember assigned, is denied already (the failure that denied it is
// reported), or whose member's snapshot lacks room the informers saw freed (the cache's event brings
// it back) is left as it is.
func (g *Gang) rejectGang(ctx context.Context, pod *v1.Pod, why func() string) *fwk.Status {
	pg := g.podGroup(pod)
	if pg == nil || !gangs.IsGang(pg) {
		return fwk.NewStatus(fwk.Unschedulable)
	}
	key := g.acct.Gangs.Key(pod)
	if g.members.count(key).assignedLack(pg) == "" {
		return fwk.NewStatus(fwk.Unschedulable)
	}
	if g.members.isDenied(key) {
		return fwk.NewStatus(fwk.Unschedulable, fmt.Sprintf("podgroup %s was rejected: its members wait until a pod leaves a node or a node is added", key))
	}
	reason := why()
	if g.freed.unseenBy(g.handle.SnapshotSharedLister().NodeInfos()) {
		return fwk.NewStatus(fwk.Unschedulable, reason)
	}
	rejected := g.rejectWaiting(key, fmt.Sprintf("member %s unschedulable: %s", pod.Name, reason))
	g.countRejection(pod, "Unschedulable")
	klog.FromContext(ctx).V(3).Info("Gang member unschedulable; waiting siblings rejected", "pod", klog.KObj(pod), "rejected", rejected)
	g.deny(key)
	g.reportFailure(pg, key, reason)
	return fwk.NewStatus(fwk.Unschedulable, fmt.Sprintf("podgroup %s rejected: member %s unschedulable", key, pod.Name))
}

// countRejection counts the rejection of pod's gang, for cause (Timeout, MemberNotBound,
// Unschedulable); a time-out is counted as such too.
func (g *Gang) countRejection(pod *v1.Pod, cause string) {
	queue, _ := g.acct.QueueOf(pod)
	metrics.GangRejections.WithLabelValues(queue, cause).Inc()
	if cause == "Timeout" {
		metrics.GangTimeouts.WithLabelValues(queue).Inc()
	}
}

// allowWaiting lets every waiting member of the gang key bind.
func (g *Gang) allowWaiting(key string) {
	g.handle.IterateOverWaitingPods(func(wp fwk.WaitingPod) {
		if g.acct.Gangs.Key(wp.GetPod()) == key {
			wp.Allow(Name)
		}
	})
}

// rejectWaiting rejects every waiting member of the gang key and says how many there were.
func (g *Gang) rejectWaiting(key, reason string) int {
	rejected := 0
	g.handle.IterateOverWaitingPods(func(wp fwk.WaitingPod) {
		if g.acct.Gangs.Key(wp.GetPod()) != key {
			return
		}
		g.members.rejectedBySibling(wp.GetPod().UID)
		g.held.Add(wp.GetPod(), deniedBucket(key))
		if wp.Reject(Name, "gang rejected: "+reason) {
			rejected++
		}
	})
	return rejected
}

// reportFailure asks for the PodGroup's condition to say how many members are not placed and why.
func (g *Gang) reportFailure(pg *schedulingv1beta1.PodGroup, key, reason string) {
	g.failures.record(types.NamespacedName{Namespace: pg.Namespace, Name: pg.Name}, g.failureMessage(key, reason))
}

func (g *Gang) failureMessage(key, reason string) string {
	c := g.members.count(key)
	return fmt.Sprintf("%d/%d tasks in gang unschedulable: %s", c.live.All-c.assigned.All, c.live.All, reason)
}

// fitSummary condenses the per-node reasons a member did not fit, as "0/N nodes are available: ...",
// or gives the queue's reason when the member's queue turned it away (its verdict in the cycle
// state) rather than the nodes.
func (g *Gang) fitSummary(m fwk.NodeToStatusReader, state cycle.Reader) string {
	if v, ok := cycle.QueueVerdictOf(state); ok && v.Refused {
		return v.Message
	}
	nodes, err := g.handle.SnapshotSharedLister().NodeInfos().List()
	if err != nil || m == nil {
		return "no node fits"
	}
	counts := map[string]int{}
	for _, n := range nodes {
		s := m.Get(n.Node().Name)
		if s == nil || s.IsSuccess() {
			continue
		}
		for _, r := range s.Reasons() {
			counts[r]++
		}
	}
	reasons := make([]string, 0, len(counts))
	for r, n := range counts {
		reasons = append(reasons, fmt.Sprintf("%d %s", n, r))
	}
	sort.Strings(reasons)
	return fmt.Sprintf("0/%d nodes are available: %s", len(nodes), strings.Join(reasons, ", "))
}
