package reclaim

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	policy "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// preFilterRunner runs a profile's PreFilter plugins for a pod outside its own scheduling cycle: the
// framework behind the plugins' handle offers it.
type preFilterRunner interface {
	RunPreFilterPlugins(ctx context.Context, state fwk.CycleState, pod *v1.Pod) (*fwk.PreFilterResult, *fwk.Status, sets.Set[string])
}

// gangRun places a gang's missing members one after the other on one copy of the snapshot: each
// member sees the victims taken and the members placed before it, and a single tally keeps the
// victim queues at their share, the victim gangs at minMember and the disruption budgets, across
// all the members.
type gangRun struct {
	r     *Reclaim
	ctx   context.Context
	tally *tally
	nodes []fwk.NodeInfo
	// work holds the copies of the nodes the run changed, by name.
	work map[string]fwk.NodeInfo
	// changes lists what the run did to the nodes, to be told to each later member's PreFilter state.
	changes []nodeChange
	// victims are the pods to evict.
	victims []*v1.Pod
}

// nodeChange is one pod the run took off a node or put on it.
type nodeChange struct {
	node  string
	pod   fwk.PodInfo
	added bool
}

// trial is one way to make room for a member on a node: the node's copy once the victims are off
// it, and the tally with them taken.
type trial struct {
	node    string
	info    fwk.NodeInfo
	tally   *tally
	victims []*victim
}

func (r *Reclaim) newGangRun(ctx context.Context, p *plan, pdbs []*policy.PodDisruptionBudget) (*gangRun, error) {
	nodes, err := r.handle.SnapshotSharedLister().NodeInfos().List()
	if err != nil {
		return nil, err
	}
	return &gangRun{r: r, ctx: ctx, tally: newTally(p, pdbs), nodes: nodes, work: map[string]fwk.NodeInfo{}}, nil
}

// place places the members in order and returns the node of each, or nil and why one of them fits
// on no node. m holds why the first member, the pod of the cycle, failed on each node.
func (run *gangRun) place(members []*v1.Pod, m fwk.NodeToStatusReader) (map[types.UID]string, string) {
	out := make(map[types.UID]string, len(members))
	for i, member := range members {
		st, res, why := run.preFilter(member)
		if st == nil {
			return nil, fmt.Sprintf("member %s cannot be placed: %s", member.Name, why)
		}
		eligible := func(name string) bool {
			if res != nil && !res.AllNodes() && !res.NodeNames.Has(name) {
				return false
			}
			return i > 0 || m.Get(name).Code() != fwk.UnschedulableAndUnresolvable
		}
		best, err := run.bestNode(member, st, eligible, i > 0)
		if err != nil {
			return nil, err.Error()
		}
		if best == nil {
			return nil, fmt.Sprintf("member %s fits on no node, even after evicting all that reclaim and preemption may take for the gang", member.Name)
		}
		if err := run.commit(member, best); err != nil {
			return nil, err.Error()
		}
		out[member.UID] = best.node
	}
	return out, ""
}

// preFilter runs the PreFilter plugins for a member on a fresh state and tells the state what the
// run changed so far. A member its queue turns away (Unschedulable) may still fit once victims of
// its own queue are gone, as in its own cycle; one that cannot be helped returns a nil state.
func (run *gangRun) preFilter(member *v1.Pod) (fwk.CycleState, *fwk.PreFilterResult, string) {
	st := framework.NewCycleState()
	res, s, _ := run.r.preFilter.RunPreFilterPlugins(run.ctx, st, member)
	if code := s.Code(); code != fwk.Success && code != fwk.Unschedulable {
		return nil, nil, s.Message()
	}
	for _, c := range run.changes {
		if err := run.tell(st, member, c); err != nil {
			return nil, nil, err.Error()
		}
	}
	return st, res, ""
}

func (run *gangRun) tell(st fwk.CycleState, member *v1.Pod, c nodeChange) error {
	node := run.work[c.node]
	var s *fwk.Status
	if c.added {
		s = run.r.handle.RunPreFilterExtensionAddPod(run.ctx, st, member, c.pod, node)
	} else {
		s = run.r.handle.RunPreFilterExtensionRemovePod(run.ctx, st, member, c.pod, node)
	}
	return s.AsError()
}

// bestNode returns where the member goes: the first node, from a random start, where it fits as the
// run left the nodes (when tryFit: the pod of the cycle has just failed on every node); else, of the
// nodes where evictions make room, the one that takes the least (no whole gang, lowest priorities,
// fewest pods), trying at least minCandidateNodes of them.
func (run *gangRun) bestNode(member *v1.Pod, st fwk.CycleState, eligible func(string) bool, tryFit bool) (*trial, error) {
	offset, want := run.r.GetOffsetAndNumCandidates(int32(len(run.nodes)))
	order := make([]string, 0, len(run.nodes))
	for k := range run.nodes {
		if name := run.nodes[(int(offset)+k)%len(run.nodes)].Node().Name; eligible(name) {
			order = append(order, name)
		}
	}
	for _, name := range order {
		if tryFit && run.r.handle.RunFilterPluginsWithNominatedPods(run.ctx, st, member, run.view(name)).IsSuccess() {
			return &trial{node: name, tally: run.tally}, nil
		}
	}
	var best *trial
	found := int32(0)
	for _, name := range order {
		if found >= want {
			break
		}
		t, err := run.try(member, st, name)
		if err != nil {
			return nil, err
		}
		if t != nil {
			found++
			if best == nil || t.takesLess(best) {
				best = t
			}
		}
	}
	return best, nil
}

// try finds the victims whose eviction lets the member fit on the node, on copies of the node, the
// member's state and the tally; nil when taking all that may be taken there is not enough.
func (run *gangRun) try(member *v1.Pod, st fwk.CycleState, name string) (*trial, error) {
	base, err := run.touch(name, member, st)
	if err != nil {
		return nil, err
	}
	t := &trial{node: name, info: base.Snapshot(), tally: run.tally.clone()}
	n := &nodeRun{ctx: run.ctx, handle: run.r.handle, state: st.Clone(), preemptor: member, node: t.info}
	if n.fits() {
		return t, nil
	}
	taken, err := n.takeUntilFits(t.tally, run.r.victimsOn(t.tally.plan, t.info))
	if err != nil || taken == nil {
		return nil, err
	}
	t.victims, err = n.reprieve(t.tally, taken)
	return t, err
}

// takesLess orders two trials: no whole gang taken before any; then the lower highest victim
// priority; then fewer pods.
func (t *trial) takesLess(o *trial) bool {
	tw, tp, tn := t.cost()
	ow, op, on := o.cost()
	switch {
	case tw != ow:
		return tw < ow
	case tp != op:
		return tp < op
	}
	return tn < on
}

func (t *trial) cost() (wholeGangs int, highest int32, pods int) {
	highest = -1 << 31
	for _, v := range t.victims {
		if v.wholeGang {
			wholeGangs++
		}
		highest = max(highest, v.priority)
		pods += len(v.pods) + len(v.others)
	}
	return wholeGangs, highest, pods
}

// commit makes the trial the run's: its node copy and tally, its victims gone (a whole gang's
// members on other nodes too), and the member on the node.
func (run *gangRun) commit(member *v1.Pod, t *trial) error {
	if t.info == nil {
		base, err := run.touch(t.node, member, nil)
		if err != nil {
			return err
		}
		t.info = base
	}
	run.work[t.node] = t.info
	run.tally = t.tally
	logger := klog.FromContext(run.ctx)
	for _, v := range t.victims {
		for _, pi := range v.pods {
			run.changes = append(run.changes, nodeChange{node: t.node, pod: pi})
		}
		for _, pi := range v.others {
			other, err := run.touch(pi.GetPod().Spec.NodeName, member, nil)
			if err != nil {
				return err
			}
			if other.RemovePod(logger, pi.GetPod()) == nil {
				run.changes = append(run.changes, nodeChange{node: pi.GetPod().Spec.NodeName, pod: pi})
			}
		}
		for _, pi := range v.all() {
			run.victims = append(run.victims, pi.GetPod())
		}
	}
	pi, err := framework.NewPodInfo(member)
	if err != nil {
		return err
	}
	t.info.AddPodInfo(pi)
	run.changes = append(run.changes, nodeChange{node: t.node, pod: pi, added: true})
	return nil
}

// view returns the run's copy of a node, or the snapshot's when the run has not changed it.
func (run *gangRun) view(name string) fwk.NodeInfo {
	if w, ok := run.work[name]; ok {
		return w
	}
	info, _ := run.r.handle.SnapshotSharedLister().NodeInfos().Get(name)
	return info
}

// touch returns the run's copy of a node, made on first use from the snapshot without the pods on
// their way out (the room they free is for the pods nominated there already); st, when given, is
// told of them.
func (run *gangRun) touch(name string, member *v1.Pod, st fwk.CycleState) (fwk.NodeInfo, error) {
	if w, ok := run.work[name]; ok {
		return w, nil
	}
	info, err := run.r.handle.SnapshotSharedLister().NodeInfos().Get(name)
	if err != nil {
		return nil, err
	}
	w := info.Snapshot()
	run.work[name] = w
	for _, pi := range run.r.goingOn(info) {
		if err := w.RemovePod(klog.FromContext(run.ctx), pi.GetPod()); err != nil {
			return nil, err
		}
		c := nodeChange{node: name, pod: pi}
		run.changes = append(run.changes, c)
		if st != nil {
			if err := run.tell(st, member, c); err != nil {
				return nil, err
			}
		}
	}
	return w, nil
}
