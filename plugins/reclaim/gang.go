package reclaim

import (
	"context"
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	quota "k8s.io/apiserver/pkg/quota/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/cycle"
	"github.com/queue-scheduler/queue-scheduler/pkg/gangs"
	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
)

// gangPreemptor is a gang short of members, taken as one preemptor: the
// members it misses are placed together on one copy of the snapshot, and their victims are chosen
// together.
type gangPreemptor struct {
	key string
	pg  *schedulingv1beta1.PodGroup
	// missing are the members to place, the pod of the cycle first.
	missing []*v1.Pod
	// req is what the missing members request together.
	req v1.ResourceList
}

// gangOf returns the gang of pod when it is short of members (gangs.Short), else nil: a gang whose
// placed members make it whole lets its further members preempt one by one. The missing members
// are the pod and the fewest others, by name, that make the gang whole (gangs.Fill): those of the
// tasks it lacks first. A gang that its pods cannot make whole is not one preemptor.
func (r *Reclaim) gangOf(pod *v1.Pod) *gangPreemptor {
	key := r.acct.Gangs.Key(pod)
	if key == "" {
		return nil
	}
	pg, ok := r.acct.Gangs.PodGroup(key)
	if !ok || !gangs.IsGang(pg) {
		return nil
	}
	var placed gangs.Members
	var others []*v1.Pod
	for _, m := range r.acct.Gangs.Members(key) {
		switch {
		case r.acct.Pods.Holds(m):
			placed.Add(m)
		case m.UID != pod.UID && len(m.Spec.SchedulingGates) == 0:
			others = append(others, m)
		}
	}
	if gangs.Short(pg, placed) == 0 {
		return nil
	}
	sort.Slice(others, func(i, j int) bool { return others[i].Name < others[j].Name })
	placed.Add(pod)
	rest, whole := gangs.Fill(pg, placed, others)
	if !whole {
		return nil
	}
	g := &gangPreemptor{key: key, pg: pg, missing: append([]*v1.Pod{pod}, rest...), req: v1.ResourceList{}}
	for _, m := range g.missing {
		g.req = quota.Add(g.req, resourcehelper.PodRequests(m, resourcehelper.PodResourcesOptions{}))
	}
	return g
}

// neverPreempts returns a missing member that may not evict, or nil.
func (g *gangPreemptor) neverPreempts() *v1.Pod {
	for _, m := range g.missing {
		if m.Spec.PreemptionPolicy != nil && *m.Spec.PreemptionPolicy == v1.PreemptNever {
			return m
		}
	}
	return nil
}

// lowest returns the missing member of the lowest priority: the gang preempts at the priority of
// its least important member, never above it.
func (g *gangPreemptor) lowest() *v1.Pod {
	low := g.missing[0]
	for _, m := range g.missing[1:] {
		if corev1helpers.PodPriority(m) < corev1helpers.PodPriority(low) {
			low = m
		}
	}
	return low
}

// postFilterGang looks for victims whose eviction lets every missing member of the gang fit, and
// evicts them together. While an earlier attempt's victims are on their way out it evicts nothing
// more. It answers UnschedulableAndUnresolvable when the gang should keep its reserved members
// (an attempt under way, the queues changed while it was tried), which ends the PostFilter chain before Gang's
// rejects them; Unschedulable when reclaim cannot help, and then says why in the cycle state.
func (r *Reclaim) postFilterGang(ctx context.Context, state fwk.CycleState, pod *v1.Pod, m fwk.NodeToStatusReader, g *gangPreemptor) (*fwk.PostFilterResult, *fwk.Status) {
	if node, why, ok := r.attempts.UnderWay(g.key, pod.UID, r.acct.Pods.Holds); ok {
		return nominating(node), fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "reclaim: "+why)
	}
	if nodes, err := m.NodesForStatusCode(r.handle.SnapshotSharedLister().NodeInfos(), fwk.Unschedulable); err != nil || len(nodes) == 0 {
		return nil, fwk.NewStatus(fwk.Unschedulable, "reclaim: preemption is not helpful: no node turned the pod away for a reason an eviction removes")
	}
	// The shares must count every member the gang asks room for: the gang's members are read from
	// the informer's store, which the accounting's handler may not have caught up with.
	for _, m := range g.missing {
		r.acct.Pods.Count(m)
	}
	snap := r.acct.Snapshot() // the latest: see PostFilter
	if m := g.neverPreempts(); m != nil {
		return r.refuse(state, snap, pod, fmt.Sprintf("podgroup %s: member %s has preemptionPolicy Never", g.key, m.Name))
	}
	p, why := r.newPlan(snap, g.lowest(), g.req)
	if p != nil && r.acct.ChangedSince(snap) {
		// The gang keeps its reserved members (see above) and tries again.
		return r.again(pod, fwk.UnschedulableAndUnresolvable)
	}
	if p != nil {
		p.gang = g.key
	}
	if p == nil {
		return r.refuse(state, snap, pod, fmt.Sprintf("podgroup %s: %s", g.key, why))
	}
	r.waiting.Remove(pod)
	pdbs, err := r.pdbs.List(labels.Everything())
	if err != nil {
		return nil, fwk.AsStatus(err)
	}
	// The members' nominations left by an earlier attempt are not room the gang may count on, nor
	// room it must make twice: the run places every missing member afresh.
	for _, m := range g.missing[1:] {
		r.handle.DeleteNominatedPodIfExists(m)
	}
	run, err := r.newGangRun(ctx, p, pdbs)
	if err != nil {
		return nil, fwk.AsStatus(err)
	}
	placements, why := run.place(g.missing, m)
	if placements == nil {
		return r.refuse(state, snap, pod, fmt.Sprintf("podgroup %s: %s", g.key, why))
	}
	r.start(ctx, g, placements, run.victims)
	return nominating(placements[pod.UID]), nil
}

// start evicts the victims of a gang's dry run, nominates each missing member to its node so that
// the room freed is held for it, and remembers the attempt until the victims are gone.
func (r *Reclaim) start(ctx context.Context, g *gangPreemptor, placements map[types.UID]string, victims []*v1.Pod) {
	r.inflight.add(victims)
	preemptor := g.missing[0]
	queue, _ := r.acct.QueueOf(preemptor)
	at := r.attempts.Begin(g.key, placements, victims, r.expire)
	for _, m := range g.missing {
		r.nominated.set(m, queue, placements[m.UID])
	}
	for _, m := range g.missing[1:] {
		r.nominate(ctx, m, placements[m.UID])
	}
	go r.evictAll(context.WithoutCancel(ctx), at, preemptor, fmt.Sprintf("podgroup %s of queue %q", g.key, queue))
	klog.FromContext(ctx).V(2).Info("Gang reclaiming", "podGroup", g.key, "members", len(g.missing), "victims", len(victims))
}

// refuse says why reclaim cannot help, in the message and, for Gang's report, in the cycle state;
// the pod comes back when a queue's spec changes or a queue holds more above its share. Such a
// change made after snap was read, whose call came before the pod was set aside, brings it back at
// once: no call would later.
func (r *Reclaim) refuse(state fwk.CycleState, snap *policy.Snapshot, pod *v1.Pod, why string) (*fwk.PostFilterResult, *fwk.Status) {
	r.setAside(pod, snap)
	r.nominated.forget(pod.UID)
	cycle.SetReclaimRefusal(state, why)
	// A nomination from an earlier cycle no longer holds room the pod may not take: pods of the same
	// or a lower priority would wait for it, as kube-scheduler's own preemption clears it when it
	// finds nothing to evict.
	return &fwk.PostFilterResult{NominatingInfo: &fwk.NominatingInfo{NominatingMode: fwk.ModeOverride}}, fwk.NewStatus(fwk.Unschedulable, "reclaim: "+why)
}

// setAside puts a pod reclaim could not help on snap's numbers with the refused pods, and lets them
// in at once when the latest snapshot rests on other queue specs or a grown spare: the call that
// lets them in may have come before the pod was set aside.
func (r *Reclaim) setAside(pod *v1.Pod, snap *policy.Snapshot) {
	r.waiting.Add(pod, refusedBucket)
	if latest := r.acct.Snapshot(); snap.QueueSpecs != latest.QueueSpecs || snap.SpareGrowths != latest.SpareGrowths {
		r.activateRefused()
	}
}

func nominating(node string) *fwk.PostFilterResult {
	if node == "" {
		return nil
	}
	return &fwk.PostFilterResult{NominatingInfo: &fwk.NominatingInfo{NominatedNodeName: node, NominatingMode: fwk.ModeOverride}}
}
