package backfill

import (
	"context"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/utils/clock"

	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/metrics"
	"github.com/queue-scheduler/queue-scheduler/pkg/podfit"
	"github.com/queue-scheduler/queue-scheduler/pkg/timeline"
)

// replanIfDue plans the reservations again once the replan interval has passed since the last
// plan, and publishes the plan in the accounting. It runs in the scheduling cycle, so that it reads
// the cycle's snapshot of the nodes, assumed pods included.
func (b *Backfill) replanIfDue(ctx context.Context, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if now.Sub(b.planned) < b.args.ReplanInterval.Duration && !b.planned.IsZero() {
		return
	}
	b.planned = now
	gangs := b.acct.WaitingGangs(int(*b.args.MaxReservations), b.lapses.setAside(now))
	if len(gangs) == 0 && b.plans.Latest().Idle() {
		return
	}
	start := time.Now()
	plan, err := b.plan(gangs, now)
	if err != nil {
		klog.FromContext(ctx).Error(err, "Listing the nodes to plan reservations on: the last plan stays")
		return
	}
	metrics.ReservationPlanDuration.Observe(time.Since(start).Seconds())
	b.publish(b.lapses.apply(plan, gangs, now))
	klog.FromContext(ctx).V(4).Info("Planned reservations", "gangs", len(gangs), "reservations", len(plan.Reservations), "unplaced", plan.Unplaced)
}

// runPrune lets go, between plans, of the reservations of gangs that no longer wait for room: a
// plan is made in a scheduling cycle, and a gang whose queue was suspended, or that was deleted,
// may leave no pod to schedule that would make the next.
func (b *Backfill) runPrune(ctx context.Context, clk clock.WithTicker) {
	t := clk.NewTicker(b.args.ReplanInterval.Duration)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			b.prune()
		}
	}
}

// prune publishes the plan without the reservations of gangs that are no longer among the first
// waiting ones, and forgets the refused pods that no longer wait.
func (b *Backfill) prune() {
	b.refused.forgetGone(b.handle.SharedInformerFactory().Core().V1().Pods().Lister())
	b.mu.Lock()
	defer b.mu.Unlock()
	plan := b.plans.Latest()
	if plan.Idle() {
		return
	}
	waiting := map[string]bool{}
	for _, g := range b.acct.WaitingGangs(int(*b.args.MaxReservations), b.lapses.setAside(b.clock.Now())) {
		waiting[g.Key] = true
	}
	var gone []string
	for _, r := range plan.Reservations {
		if !waiting[r.Gang] {
			gone = append(gone, r.Gang)
		}
	}
	for _, gang := range plan.Unplaced {
		if !waiting[gang] {
			gone = append(gone, gang)
		}
	}
	if len(gone) > 0 {
		b.publish(plan.Without(gone))
	}
}

// publish makes plan the one in force, and reports it.
func (b *Backfill) publish(plan *timeline.Plan) {
	b.plans.Publish(plan)
	metrics.SetReservations(len(plan.Reservations), plan.Reserved())
}

// plan computes the reservations of gangs on the cycle's snapshot of the nodes.
func (b *Backfill) plan(gangs []accounting.WaitingGang, now time.Time) (*timeline.Plan, error) {
	infos, err := b.handle.SnapshotSharedLister().NodeInfos().List()
	if err != nil {
		return nil, err
	}
	return b.planOn(infos, gangs, now), nil
}

// planOn computes the reservations of gangs on the nodes infos. The members of a gang waiting at
// Permit are planned with the rest: their room counts as free, and then as taken by them, as if
// they had been placed after the plan was made.
func (b *Backfill) planOn(infos []fwk.NodeInfo, gangs []accounting.WaitingGang, now time.Time) *timeline.Plan {
	dims := timeline.Dims(requestedNames(gangs))
	// By name, so that the same cluster gives the same plan whatever the snapshot's order.
	infos = slices.DeleteFunc(slices.Clone(infos), func(info fwk.NodeInfo) bool { return info.Node() == nil || info.Node().Spec.Unschedulable })
	slices.SortFunc(infos, func(a, b fwk.NodeInfo) int { return strings.Compare(a.Node().Name, b.Node().Name) })
	placing := placingMembers(gangs)
	nodes := make([]timeline.Node, 0, len(infos))
	schedulable := make([]*v1.Node, 0, len(infos))
	var placed []placedMember
	for _, info := range infos {
		n, on := b.nodeOf(dims, info, placing, now)
		nodes, placed = append(nodes, n), append(placed, on...)
		schedulable = append(schedulable, info.Node())
	}
	planned := make([]timeline.Gang, 0, len(gangs))
	eligible := podfit.NewEligibility(schedulable)
	last := b.plans.Latest()
	for _, g := range gangs {
		gang := b.gangOf(dims, g, eligible)
		gang.Prefer = lastNodes(last.Reservation(g.Key), schedulable)
		planned = append(planned, gang)
	}
	plan := timeline.Compute(dims, nodes, planned, timeline.Settings{
		Now: now, Window: b.args.Window.Duration, Resolution: b.args.Resolution.Duration, MaxFits: maxFits,
	})
	for _, m := range placed {
		plan.Take(m.node, m.pod, 1)
	}
	return plan
}

// maxFits bounds one gang's cost in a plan: the times its members are fitted onto every node
// before it is given up as unplaced until the next plan. The counts of places rule out most times
// before any fit; a gang that fails this many fits is fragmented beyond what a plan should chase.
const maxFits = 32

// placedMember is a member waiting at Permit, on its node, as the guards read it.
type placedMember struct {
	node string
	pod  timeline.Pod
}

// placingMembers are the gangs' members waiting at Permit: their gang, by pod.
func placingMembers(gangs []accounting.WaitingGang) map[types.UID]string {
	out := map[types.UID]string{}
	for _, g := range gangs {
		for _, pod := range g.Placing {
			out[pod.UID] = g.Key
		}
	}
	return out
}

// lastNodes marks the nodes of a gang's last reservation, or is nil.
func lastNodes(r *timeline.Reservation, nodes []*v1.Node) []bool {
	if r == nil {
		return nil
	}
	out := make([]bool, len(nodes))
	for i, node := range nodes {
		out[i] = slices.ContainsFunc(r.Nodes, func(s timeline.Share) bool { return s.Node == node.Name })
	}
	return out
}

// nodeOf is a node's free room and the ends of its pods that have a runtime bound; the room of the
// members waiting at Permit (placing) counts as free, and they are returned.
func (b *Backfill) nodeOf(dims []v1.ResourceName, info fwk.NodeInfo, placing map[types.UID]string, now time.Time) (timeline.Node, []placedMember) {
	pods := info.GetPods()
	n := timeline.Node{Name: info.Node().Name, Free: resourceVector(dims, info.GetAllocatable(), int64(info.GetAllocatable().GetAllowedPodNumber()))}
	requested := resourceVector(dims, info.GetRequested(), int64(len(pods)))
	for i := range n.Free {
		n.Free[i] -= requested[i]
	}
	var placed []placedMember
	for _, pi := range pods {
		pod := pi.GetPod()
		if gang, ok := placing[pod.UID]; ok {
			n.Free.Add(resourceVector(dims, pi.CalculateResource().Resource, 1), 1)
			placed = append(placed, placedMember{node: n.Name, pod: b.podOf(dims, pod, gang, now)})
			continue
		}
		if end := b.acct.RunningEnd(pod, now); !end.IsZero() {
			n.Releases = append(n.Releases, timeline.Release{At: end, Gives: resourceVector(dims, pi.CalculateResource().Resource, 1)})
		}
	}
	return n, placed
}

// podOf is a pod of gang ("" for none) about to be placed at now, as the guards read it: its end is
// counted from a resolution step later, as it starts within a step of being bound.
func (b *Backfill) podOf(dims []v1.ResourceName, pod *v1.Pod, gang string, now time.Time) timeline.Pod {
	return timeline.Pod{
		Requests: podfit.Requests(dims, pod),
		End:      b.acct.RuntimeBound(pod).End(now.Add(b.args.Resolution.Duration)),
		Gang:     gang,
	}
}

// gangOf is a waiting gang as the plan reads it.
func (b *Backfill) gangOf(dims []v1.ResourceName, g accounting.WaitingGang, eligible *podfit.Eligibility) timeline.Gang {
	out := timeline.Gang{Key: g.Key}
	for _, pod := range g.Members {
		out.Members = append(out.Members, timeline.Member{
			Requests: podfit.Requests(dims, pod),
			Eligible: eligible.Of(pod),
			Bound:    b.acct.RuntimeBound(pod),
		})
	}
	return out
}

// requestedNames are the resources the gangs' members request.
func requestedNames(gangs []accounting.WaitingGang) []v1.ResourceName {
	var names []v1.ResourceName
	for _, g := range gangs {
		for _, pod := range g.Members {
			for name := range resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}) {
				if !slices.Contains(names, name) {
					names = append(names, name)
				}
			}
		}
	}
	slices.SortFunc(names, func(a, b v1.ResourceName) int { return strings.Compare(string(a), string(b)) })
	return names
}

// resourceVector reads a NodeInfo's resource in the plan's resources, with pods for the pod count.
func resourceVector(dims []v1.ResourceName, r fwk.Resource, pods int64) timeline.Vector {
	v := make(timeline.Vector, len(dims))
	for i, name := range dims {
		switch name {
		case v1.ResourceCPU:
			v[i] = r.GetMilliCPU()
		case v1.ResourceMemory:
			v[i] = r.GetMemory()
		case v1.ResourceEphemeralStorage:
			v[i] = r.GetEphemeralStorage()
		case v1.ResourcePods:
			v[i] = pods
		default:
			v[i] = r.GetScalarResources()[name]
		}
	}
	return v
}
