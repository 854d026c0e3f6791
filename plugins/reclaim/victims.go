package reclaim

import (
	"context"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	policy "k8s.io/api/policy/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/gangs"
)

// SelectVictimsOnNode finds the fewest, least important pods whose eviction lets the preemptor fit
// on the node: it takes victims, least important first, until the preemptor fits, each within what
// the plan allows, then puts back, most important first, every victim the preemptor fits without.
func (r *Reclaim) SelectVictimsOnNode(ctx context.Context, state fwk.CycleState, preemptor *v1.Pod, nodeInfo fwk.NodeInfo,
	_ []*preemption.DomainVictim, pdbs []*policy.PodDisruptionBudget) ([]*v1.Pod, int, *fwk.Status) {
	data, err := state.Read(planKey)
	if err != nil {
		return nil, 0, fwk.AsStatus(err)
	}
	p := data.(*plan)
	candidates := r.victimsOn(p, nodeInfo)
	if len(candidates) == 0 {
		return nil, 0, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "no pod on the node may be reclaimed or preempted")
	}
	n := &nodeRun{ctx: ctx, handle: r.handle, state: state, preemptor: preemptor, node: nodeInfo}
	if err := n.removePods(r.goingOn(nodeInfo)); err != nil {
		return nil, 0, fwk.AsStatus(err)
	}
	if n.fits() {
		// The pods nominated here already count on the room; what is left needs no eviction.
		return nil, 0, fwk.NewStatus(fwk.Unschedulable, "the node has room once the pods terminating on it are gone")
	}
	t := newTally(p, pdbs)
	taken, err := n.takeUntilFits(t, candidates)
	if err != nil {
		return nil, 0, fwk.AsStatus(err)
	}
	if taken == nil {
		return nil, 0, fwk.NewStatus(fwk.Unschedulable, "evicting what may be taken on the node does not make room")
	}
	chosen, err := n.reprieve(t, taken)
	if err != nil {
		return nil, 0, fwk.AsStatus(err)
	}
	pods, violations := victimPods(chosen, pdbs)
	r.inflight.candidate(preemptor.UID, nodeInfo.Node().Name, pods)
	klog.FromContext(ctx).V(5).Info("Victims found", "preemptor", klog.KObj(preemptor), "node", nodeInfo.Node().Name, "victims", len(pods))
	return pods, violations, nil
}

// goingOn lists the node's pods on their way out: terminating, or victims of an eviction under way.
// The dry run takes them as gone: the pods nominated to the node count on their room already. A pod
// still there gangs.AttemptSlack after its deletion was due (a finalizer, a node that does not answer) is
// not on its way out: waiting for it would wait for ever.
func (r *Reclaim) goingOn(nodeInfo fwk.NodeInfo) []fwk.PodInfo {
	var out []fwk.PodInfo
	now := r.clock.Now()
	for _, pi := range nodeInfo.GetPods() {
		pod := pi.GetPod()
		terminating := pod.DeletionTimestamp != nil && leavingBy(pod.DeletionTimestamp.Time, now)
		if terminating || r.inflight.evicting(pod.UID) {
			out = append(out, pi)
		}
	}
	return out
}

// leavingBy says whether a pod whose deletion was due at due still counts as on its way out at now:
// until gangs.AttemptSlack after it.
func leavingBy(due, now time.Time) bool {
	return now.Before(due.Add(gangs.AttemptSlack))
}

// victimsOn lists what may be taken on the node, least important first: single pods (and members
// of a gang above its minMember) by priority, later starts first; whole gangs last. Pods on their way
// out are not listed: the dry run has taken them off the node already.
func (r *Reclaim) victimsOn(p *plan, nodeInfo fwk.NodeInfo) []*victim {
	var out []*victim
	gangs := map[string]*victim{}
	for _, pi := range nodeInfo.GetPods() {
		pod := pi.GetPod()
		kind, queue := p.classify(pod, r.acct.QueueOf, r.acct.Gangs.Key)
		if kind == notAVictim || r.inflight.evicting(pod.UID) {
			continue // a victim under way is gone already in the dry run
		}
		v := &victim{kind: kind, queue: queue, priority: corev1helpers.PodPriority(pod), pods: []fwk.PodInfo{pi},
			gang: r.acct.Gangs.Key(pod), started: startOf(pod), remembered: p.remembered[queue]}
		v.requests = requestsOf(v.pods)
		if v.gang == "" {
			out = append(out, v)
			continue
		}
		if v.slack = r.gangSlack(v.gang, schedulingv1beta1.TaskOf(pod)) - p.gangsEvicting[v.gang]; v.slack > 0 {
			out = append(out, v)
		}
		whole := gangs[v.gang]
		if whole == nil {
			whole = &victim{kind: kind, queue: queue, gang: v.gang, wholeGang: true, started: v.started, remembered: v.remembered}
			gangs[v.gang] = whole
		}
		whole.pods = append(whole.pods, pi)
		whole.priority = max(whole.priority, v.priority)
	}
	sort.SliceStable(out, func(i, j int) bool { return lessImportant(out[i], out[j]) })
	var wholes []*victim
	for _, w := range gangs {
		w.others = r.gangMembersElsewhere(w.gang, nodeInfo.Node().Name)
		w.requests = requestsOf(append(append([]fwk.PodInfo(nil), w.pods...), w.others...))
		wholes = append(wholes, w)
	}
	sort.SliceStable(wholes, func(i, j int) bool { return lessImportant(wholes[i], wholes[j]) })
	return append(out, wholes...)
}

// lessImportant orders victims: lower priority first; among equal priorities, the queue that used
// the most as its usage history remembers it; then later starts.
func lessImportant(a, b *victim) bool {
	if a.priority != b.priority {
		return a.priority < b.priority
	}
	if a.remembered != b.remembered {
		return a.remembered > b.remembered
	}
	return a.started > b.started
}

func startOf(pod *v1.Pod) int64 {
	if pod.Status.StartTime != nil {
		return pod.Status.StartTime.UnixNano()
	}
	return pod.CreationTimestamp.UnixNano()
}

// gangBound is a gang's PodGroup and its bound members; ok is false when the PodGroup is gone.
func (r *Reclaim) gangBound(key string) (pg *schedulingv1beta1.PodGroup, bound gangs.Members, ok bool) {
	if pg, ok = r.acct.Gangs.PodGroup(key); !ok {
		return nil, gangs.Members{}, false
	}
	return pg, gangs.Count(r.acct.Gangs.Members(key), func(m *v1.Pod) bool { return m.Spec.NodeName != "" }), true
}

// gangSlack is how many bound members of task a gang may lose and stay whole (gangs.Slack).
func (r *Reclaim) gangSlack(key, task string) int {
	pg, bound, ok := r.gangBound(key)
	if !ok {
		return 0
	}
	return int(gangs.Slack(pg, bound, task))
}

// gangMembersElsewhere are a gang's bound members on other nodes than node.
func (r *Reclaim) gangMembersElsewhere(key, node string) []fwk.PodInfo {
	var out []fwk.PodInfo
	for _, m := range r.acct.Gangs.Members(key) {
		if m.Spec.NodeName != "" && m.Spec.NodeName != node {
			if pi, err := framework.NewPodInfo(m); err == nil {
				out = append(out, pi)
			}
		}
	}
	return out
}

// nodeRun simulates evictions on one node.
type nodeRun struct {
	ctx       context.Context
	handle    fwk.Handle
	state     fwk.CycleState
	preemptor *v1.Pod
	node      fwk.NodeInfo
}

// takeUntilFits takes candidates in order, each that the tally allows, until the preemptor fits; it
// returns what it took, or nil when all it may take is not enough.
func (n *nodeRun) takeUntilFits(t *tally, candidates []*victim) ([]*victim, error) {
	var taken []*victim
	for _, v := range candidates {
		if !t.allows(v) || (v.gang != "" && !v.wholeGang && t.fromGangs[v.gang] >= v.slack) {
			continue // a gang keeps minMember members
		}
		if v.wholeGang && t.fromGangs[v.gang] > 0 {
			continue // some members went one by one already; never more than the gang has
		}
		if err := n.remove(v); err != nil {
			return nil, err
		}
		t.take(v)
		taken = append(taken, v)
		if n.fits() {
			return taken, nil
		}
	}
	return nil, nil
}

// reprieve puts back, most important first, the victims the preemptor fits without.
func (n *nodeRun) reprieve(t *tally, taken []*victim) ([]*victim, error) {
	var chosen []*victim
	for i := len(taken) - 1; i >= 0; i-- {
		v := taken[i]
		if err := n.add(v); err != nil {
			return nil, err
		}
		if n.fits() {
			t.giveBack(v)
			continue
		}
		if err := n.remove(v); err != nil {
			return nil, err
		}
		chosen = append(chosen, v)
	}
	return chosen, nil
}

func (n *nodeRun) fits() bool {
	return n.handle.RunFilterPluginsWithNominatedPods(n.ctx, n.state, n.preemptor, n.node).IsSuccess()
}

func (n *nodeRun) remove(v *victim) error {
	return n.removePods(v.pods)
}

func (n *nodeRun) removePods(pods []fwk.PodInfo) error {
	logger := klog.FromContext(n.ctx)
	for _, pi := range pods {
		if err := n.node.RemovePod(logger, pi.GetPod()); err != nil {
			return err
		}
		if s := n.handle.RunPreFilterExtensionRemovePod(n.ctx, n.state, n.preemptor, pi, n.node); !s.IsSuccess() {
			return s.AsError()
		}
	}
	return nil
}

func (n *nodeRun) add(v *victim) error {
	for _, pi := range v.pods {
		n.node.AddPodInfo(pi)
		if s := n.handle.RunPreFilterExtensionAddPod(n.ctx, n.state, n.preemptor, pi, n.node); !s.IsSuccess() {
			return s.AsError()
		}
	}
	return nil
}

// victimPods lists the chosen victims' pods and counts the victims whose eviction a PDB forbids.
func victimPods(chosen []*victim, pdbs []*policy.PodDisruptionBudget) ([]*v1.Pod, int) {
	var pods []*v1.Pod
	units := make([]preemption.Victim, 0, len(chosen))
	for _, v := range chosen {
		all := v.all()
		for _, pi := range all {
			pods = append(pods, pi.GetPod())
		}
		if u, err := preemption.NewVictim(all, v.priority, fwk.PodKeyType); err == nil {
			units = append(units, u)
		}
	}
	violating, _ := preemption.FilterVictimsWithPDBViolation(units, pdbs)
	return pods, len(violating)
}
