package reclaim

import (
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	quota "k8s.io/apiserver/pkg/quota/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/utils/clock"

	"github.com/queue-scheduler/queue-scheduler/pkg/cycle"
	"github.com/queue-scheduler/queue-scheduler/pkg/gangs"
)

// inflight remembers the victims chosen but not yet gone: evictions run asynchronously, and until a
// victim is deleting, the accounting still counts it. The next pod's dry run must not count on it
// again, or a victim queue would be taken below its share and a gang below minMember.
type inflight struct {
	clock clock.PassiveClock

	mu sync.Mutex
	// chosen holds, per preemptor and node ("uid/node"), the victims its dry run picked there.
	chosen map[string][]*v1.Pod
	// victims holds the victims of preemptions under way.
	victims map[types.UID]*v1.Pod
	// left holds the victims that left victims because the accounting sees them terminating or gone.
	// A cycle's node snapshot, taken before kube-scheduler's cache heard of it, can still show such a
	// victim as it was, neither terminating nor gone: while a plan's snapshot shows it, the dry run
	// takes it as going, or a second preemptor would see no room being freed and evict again.
	left map[types.UID]*v1.Pod
	// begun holds the victims under way whose eviction went through, or may have.
	begun map[types.UID]struct{}
	// unsure holds, with when it was sent, the victims under way whose eviction got no answer (its
	// call timed out or was cancelled): the server may have applied it. Such a victim stays on its
	// way out until the accounting sees it leave, or until gangs.AttemptSlack passes with it still
	// held, when the eviction is taken as never applied.
	unsure map[types.UID]time.Time
	// of holds, per preemptor, the victims of the preemption it was nominated for, until they are no
	// longer counted (ownStill).
	of map[types.UID]ownVictims
}

// ownVictims are the victims of one preemptor's preemption, and when it was settled.
type ownVictims struct {
	since time.Time
	pods  []*v1.Pod
}

// stillCounted says whether a victim of a preemption settled at since still counts against its
// queue.
type stillCounted func(victim *v1.Pod, since time.Time) bool

func newInflight(c clock.PassiveClock) *inflight {
	return &inflight{clock: c, chosen: map[string][]*v1.Pod{}, victims: map[types.UID]*v1.Pod{}, left: map[types.UID]*v1.Pod{},
		begun: map[types.UID]struct{}{}, unsure: map[types.UID]time.Time{}, of: map[types.UID]ownVictims{}}
}

// victimState is how the accounting sees a victim under way.
type victimState int

const (
	// victimHeld: the victim still holds its room.
	victimHeld victimState = iota
	// victimLeaving: the victim is terminating, or gone.
	victimLeaving
	// victimReleased: the victim went back to the scheduling queue (it was preempted while it
	// waited at Permit), and holds nothing.
	victimReleased
)

func chosenKey(preemptor types.UID, node string) string { return string(preemptor) + "/" + node }

// candidate records the victims a dry run picked on a node for preemptor.
func (f *inflight) candidate(preemptor types.UID, node string, victims []*v1.Pod) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.chosen[chosenKey(preemptor, node)] = victims
}

// settle keeps the victims of the node the preemptor was nominated to (none when node is empty) and
// drops its other candidates.
func (f *inflight) settle(preemptor types.UID, node string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	prefix := string(preemptor) + "/"
	for key, victims := range f.chosen {
		if len(key) < len(prefix) || key[:len(prefix)] != prefix {
			continue
		}
		if node != "" && key == chosenKey(preemptor, node) {
			for _, v := range victims {
				f.victims[v.UID] = v
			}
			if len(victims) > 0 {
				f.of[preemptor] = ownVictims{since: f.clock.Now(), pods: slices.Clone(victims)}
			}
		}
		delete(f.chosen, key)
	}
}

// add records victims chosen for a preemption under way.
func (f *inflight) add(victims []*v1.Pod) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, v := range victims {
		f.victims[v.UID] = v
	}
}

// evicting says whether the pod is the victim of a preemption under way, or one the accounting saw
// leave that the latest plan's snapshot still showed.
func (f *inflight) evicting(uid types.UID) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.victims[uid]; ok {
		return true
	}
	_, ok := f.left[uid]
	return ok
}

// pending returns, among the victims under way, those the accounting still counts as holding their
// room (state says how it sees each), per queue what they hold and per gang how many they are; it
// moves those leaving to left, and forgets the others. nodes is the plan's snapshot: the victims
// left that it no longer shows are forgotten.
func (f *inflight) pending(state func(*v1.Pod) victimState, queueOf func(*v1.Pod) (string, error), gangOf func(*v1.Pod) string,
	nodes fwk.NodeInfoLister) (map[string]v1.ResourceList, map[string]int, []*v1.Pod) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.clock.Now()
	for uid, pod := range f.left {
		if !cycle.Shows(nodes, pod.Spec.NodeName, uid) {
			delete(f.left, uid)
		}
	}
	byQueue, byGang := map[string]v1.ResourceList{}, map[string]int{}
	var alive []*v1.Pod
	for uid, pod := range f.victims {
		if s := state(pod); s != victimHeld {
			delete(f.victims, uid)
			if s == victimLeaving && cycle.Shows(nodes, pod.Spec.NodeName, uid) {
				f.left[uid] = pod
			}
			continue
		}
		if sent, ok := f.unsure[uid]; ok && now.Sub(sent) >= gangs.AttemptSlack {
			delete(f.victims, uid) // its eviction never applied: it stays, and holds its room
			continue
		}
		alive = append(alive, pod)
		if q, err := queueOf(pod); err == nil {
			byQueue[q] = quota.Add(byQueue[q], resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}))
		}
		if key := gangOf(pod); key != "" {
			byGang[key]++
		}
	}
	for uid := range f.begun {
		if _, ok := f.victims[uid]; !ok {
			delete(f.begun, uid)
			delete(f.unsure, uid)
		}
	}
	return byQueue, byGang, alive
}

// begin records that a victim's eviction went through.
func (f *inflight) begin(uid types.UID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.begun[uid] = struct{}{}
}

// beginUnsure records that a victim's eviction got no answer: it may have gone through.
func (f *inflight) beginUnsure(uid types.UID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.begun[uid] = struct{}{}
	f.unsure[uid] = f.clock.Now()
}

// fail lets go the victims of preemptor's candidate on node that stay: once one eviction failed, the
// Evaluator evicts none of those left. Those whose eviction went through, and those terminating
// already, are still on their way out. A candidate not settled yet keeps only those.
func (f *inflight) fail(preemptor types.UID, node string, victims []*v1.Pod) {
	f.mu.Lock()
	defer f.mu.Unlock()
	stays := func(v *v1.Pod) bool {
		_, begun := f.begun[v.UID]
		return !begun && v.DeletionTimestamp == nil
	}
	key := chosenKey(preemptor, node)
	if chosen, ok := f.chosen[key]; ok {
		f.chosen[key] = slices.DeleteFunc(slices.Clone(chosen), stays)
	}
	var staying []*v1.Pod
	for _, v := range victims {
		if stays(v) {
			staying = append(staying, v)
		}
	}
	f.dropLocked(staying)
}

// drop forgets victims whose eviction failed: they stay, and hold their room, and their preemptor no
// longer waits for them.
func (f *inflight) drop(victims []*v1.Pod) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dropLocked(victims)
}

// dropLocked is drop with f.mu held.
func (f *inflight) dropLocked(victims []*v1.Pod) {
	for _, victim := range victims {
		delete(f.victims, victim.UID)
	}
	for preemptor := range f.of {
		f.keep(preemptor, func(v *v1.Pod, _ time.Time) bool {
			return !slices.ContainsFunc(victims, func(d *v1.Pod) bool { return d.UID == v.UID })
		})
	}
}

// ownStill says whether a victim of the preemption preemptor was nominated for still counts
// (counted says so); it forgets those that no longer do.
func (f *inflight) ownStill(preemptor types.UID, counted stillCounted) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.keep(preemptor, counted)
}

// forgetOwn forgets, for every preemptor, the victims that no longer count: a preemptor that bound
// or went does not ask again.
func (f *inflight) forgetOwn(counted stillCounted) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for preemptor := range f.of {
		f.keep(preemptor, counted)
	}
}

// keep keeps the victims of preemptor that counted says still count, and forgets the preemptor when
// none does; it says whether some do. f.mu is held.
func (f *inflight) keep(preemptor types.UID, counted stillCounted) bool {
	own := f.of[preemptor]
	own.pods = slices.DeleteFunc(own.pods, func(v *v1.Pod) bool { return !counted(v, own.since) })
	if len(own.pods) == 0 {
		delete(f.of, preemptor)
		return false
	}
	f.of[preemptor] = own
	return true
}
