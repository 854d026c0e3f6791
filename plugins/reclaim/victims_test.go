package reclaim

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	fwk "k8s.io/kube-scheduler/framework"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	"k8s.io/utils/clock"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/cycle"
	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// nodeFixture is one 3-CPU node "n" holding 1-CPU pods, with a framework that filters by resources
// and a pod nominated to the node.
type nodeFixture struct {
	ctx       context.Context
	reclaim   *Reclaim
	framework framework.Framework
	snapshot  *internalcache.Snapshot
	client    *kubefake.Clientset
	informers informers.SharedInformerFactory
}

// borrowerPod is a 1-CPU pod of the borrower queue on node n.
func borrowerPod(name string, priority int32) *v1.Pod {
	p := util.MakePod("ns", name).UID(name).Label(schedulingv1beta1.QueueLabel, "borrower").Priority(priority).
		Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Node("n").Obj()
	p.CreationTimestamp = metav1.Now()
	return p
}

func newNodeFixture(t *testing.T, nominated *v1.Pod, pods ...*v1.Pod) *nodeFixture {
	t.Helper()
	return newNodeFixtureOn(t, accounting.Config{}, nominated, pods...)
}

// newNodeFixtureOn is newNodeFixture with an accounting of configuration cfg: one node n of 3 CPUs
// holding pods, and nominated (when not nil) waiting in the scheduling queue, nominated to n.
func newNodeFixtureOn(t *testing.T, cfg accounting.Config, nominated *v1.Pod, pods ...*v1.Pod) *nodeFixture {
	t.Helper()
	var pending []*v1.Pod
	if nominated != nil {
		nominated = nominated.DeepCopy()
		nominated.Status.NominatedNodeName = "n"
		pending = append(pending, nominated) // the nominator forgets pods the informer does not have
	}
	var clk clock.WithTickerAndDelayedExecution = clock.RealClock{}
	if cfg.Clock != nil {
		clk = cfg.Clock
	}
	return newNodesFixture(t, clk, []*v1.Node{util.MakeNode("n", "3", "10Gi")}, pods, pending)
}

// selectVictims runs the dry run on the node for a 1-CPU pod of the owner below its share, which may
// take up to 3 CPUs from the borrower.
func (f *nodeFixture) selectVictims(t *testing.T, preemptor *v1.Pod) ([]*v1.Pod, *fwk.Status) {
	t.Helper()
	state := f.preFiltered(t, preemptor)
	state.Write(planKey, &plan{queue: "owner", priority: 1, req: cpu("1"), spare: map[string]v1.ResourceList{"borrower": cpu("3")}})
	info, err := f.snapshot.NodeInfos().Get("n")
	if err != nil {
		t.Fatal(err)
	}
	victims, _, status := f.reclaim.SelectVictimsOnNode(f.ctx, state, preemptor, info.Snapshot(), nil, nil)
	return victims, status
}

// preFiltered runs the profile's PreFilter plugins for pod and returns the cycle's state.
func (f *nodeFixture) preFiltered(t *testing.T, pod *v1.Pod) fwk.CycleState {
	t.Helper()
	state := framework.NewCycleState()
	if _, s, _ := f.framework.RunPreFilterPlugins(f.ctx, state, pod); !s.IsSuccess() {
		t.Fatalf("PreFilter of %s: %v", pod.Name, s)
	}
	return state
}

// unschedulableOnN is the Filter's verdict of a cycle that found no room on node n.
func unschedulableOnN() fwk.NodeToStatusReader {
	m := framework.NewDefaultNodeToStatus()
	m.Set("n", fwk.NewStatus(fwk.Unschedulable))
	return m
}

func pendingPod(name string) *v1.Pod {
	p := util.MakePod("ns", name).UID(name).Label(schedulingv1beta1.QueueLabel, "owner").Priority(1).
		Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()
	return p
}

// A victim under way makes room for the pod nominated to its node: the next preemptor takes the next
// low-priority pod, neither the one going already nor a high-priority one. The going pod is never a
// candidate again, even when it is first in line (the latest started of the lowest priority): taking
// it twice failed the whole node, and the preemptor went to a node where only high-priority pods were
// left to take.
func TestVictimsUnderWay(t *testing.T) {
	for _, tt := range []struct {
		name        string
		goingIsLast bool
	}{
		{"the going pod started first", false},
		{"the going pod is first in line", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			going, low, high := borrowerPod("going", 1), borrowerPod("low", 1), borrowerPod("high", 100)
			if tt.goingIsLast {
				going.CreationTimestamp = metav1.NewTime(low.CreationTimestamp.Add(time.Minute))
			}
			f := newNodeFixture(t, pendingPod("nominated"), low, going, high)
			f.reclaim.inflight.victims[going.UID] = going
			victims, status := f.selectVictims(t, pendingPod("preemptor"))
			if !status.IsSuccess() {
				t.Fatalf("dry run: %v", status)
			}
			if got := names(victims); len(got) != 1 || got[0] != "low" {
				t.Errorf("victims %v, want [low]", got)
			}
		})
	}
}

// A node whose terminating pods leave room once gone needs no eviction: the preemptor waits for them.
func TestTerminatingPodsLeaveRoomWithoutEviction(t *testing.T) {
	terminating := borrowerPod("terminating", 1)
	terminating.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	f := newNodeFixture(t, nil, terminating, borrowerPod("low", 1), borrowerPod("high", 100))
	victims, status := f.selectVictims(t, pendingPod("preemptor"))
	if status.Code() != fwk.Unschedulable || len(victims) != 0 {
		t.Errorf("got victims %v and status %v, want none and Unschedulable", names(victims), status)
	}
}

func names(pods []*v1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

// A pod whose victims are leaving keeps its nomination though the shares, which count them gone
// already, leave nothing more to take back: refusing it would hand its room to another pod.
func TestNominatedPodKeepsItsNodeWhileItsVictimsLeave(t *testing.T) {
	victim := borrowerPod("victim", 1)
	victim.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	preemptor := pendingPod("preemptor")
	preemptor.Status.NominatedNodeName = "n"
	f := newNodeFixture(t, preemptor, victim, borrowerPod("low", 1), borrowerPod("high", 1))
	r := f.reclaim
	// The borrower holds 2 CPUs, its share beside the owner's 1 pending: nothing is spare.
	if err := wait.PollUntilContextTimeout(f.ctx, time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return len(r.acct.ReclaimableSpare("owner")) == 0 && deservedCPU(r, "owner") == 1, nil
	}); err != nil {
		t.Fatalf("the shares never left nothing spare: deserved %v, spare %v", r.acct.Deserved("owner"), r.acct.ReclaimableSpare("owner"))
	}
	state := f.preFiltered(t, preemptor)
	result, status := r.PostFilter(f.ctx, state, preemptor, unschedulableOnN())
	if status.Code() != fwk.Unschedulable || result == nil || result.Mode() != fwk.ModeOverride || result.NominatedNodeName != "n" {
		t.Errorf("got %+v, %v; want the pod kept on node n while its victim leaves", result, status)
	}
}

func deservedCPU(r *Reclaim, queue string) int64 {
	q := r.acct.Deserved(queue)[v1.ResourceCPU]
	return q.Value()
}

// A pod the Evaluator finds not eligible to preempt yet keeps its nomination (the Evaluator leaves
// it as it is), and with it its queue's room for the queue's other pods.
func TestNominationKeptWhenNotEligibleYet(t *testing.T) {
	half := func(name string) *v1.Pod {
		return util.MakePod("ns", name).UID(name).Label(schedulingv1beta1.QueueLabel, "borrower").Priority(1).
			Req(map[v1.ResourceName]string{v1.ResourceCPU: "500m"}).Node("n").Obj()
	}
	terminating := half("terminating")
	terminating.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	preemptor := pendingPod("preemptor")
	preemptor.Status.NominatedNodeName = "n"
	f := newNodeFixture(t, preemptor, terminating, half("mid"), borrowerPod("low", 1), borrowerPod("high", 1))
	r := f.reclaim
	r.evaluator = preemption.NewEvaluator(Name, f.framework, r, preemption.NewExecutor(f.framework, feature.Features{}))
	r.nominated.set(preemptor, "owner", "n")
	// The owner deserves 1 CPU and the borrower holds 2.5: 500m are spare. The terminating pod frees
	// 500m of n, not enough to wait for it.
	if err := wait.PollUntilContextTimeout(f.ctx, time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return len(r.acct.ReclaimableSpare("owner")) == 1, nil
	}); err != nil {
		t.Fatalf("the shares never left the borrower's spare: %v", r.acct.ReclaimableSpare("owner"))
	}
	state := f.preFiltered(t, preemptor)
	if _, status := r.PostFilter(f.ctx, state, preemptor, unschedulableOnN()); !strings.Contains(status.Message(), "not eligible") {
		t.Fatalf("status %v: want the pod not eligible while a pod on its node terminates", status)
	}
	if got := r.nominated.holding("owner", util.MakePod("ns", "other").UID("other").Obj(), func(*v1.Pod) bool { return true }); got.Cpu().String() != "1" {
		t.Errorf("the owner's room held for its nominated pod: %v, want its 1 CPU", got)
	}
}

// ownerPod is a 1-CPU pod of the owner queue on node n, of priority 0.
func ownerPod(name string) *v1.Pod {
	return util.MakePod("ns", name).UID(name).Label(schedulingv1beta1.QueueLabel, "owner").Priority(0).
		Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Node("n").Obj()
}

// Pods that arrive between a pod's PreFilter and its PostFilter do not turn it away when its queue
// admitted it: it preempts within its queue on the latest snapshot. One its queue refused on the
// older snapshot is activated, to be judged again on the latest: what its dry run must free is
// measured against the numbers it was refused on.
func TestArrivalsDuringACycle(t *testing.T) {
	for _, tt := range []struct {
		name    string
		refused bool
		want    string
	}{
		{"admitted by its queue", false, "preempting 1 victim"},
		{"refused by its queue", true, "it is tried again on them"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			preemptor := pendingPod("preemptor")
			preemptor.Spec.Priority = new(int32(10))
			f := newNodeFixture(t, nil, ownerPod("low-0"), ownerPod("low-1"), ownerPod("low-2"))
			r := f.reclaim
			handle := &activations{Handle: f.framework}
			executor := preemption.NewExecutor(f.framework, feature.Features{})
			executor.PreemptPod = r.evict
			r.evaluator = preemption.NewEvaluator(Name, f.framework, r, executor)
			createPod(t, f, preemptor) // the Evaluator reads it back
			waitFor(t, f.ctx, "the owner's low-priority pods counted", func() bool { return r.acct.Pods.HasBoundBelow("owner", 10) })
			state := f.preFiltered(t, preemptor)
			judged := cycle.Snapshot(state, r.acct.Snapshot) // Proportion's PreFilter, which takes it, is not in this profile
			createPod(t, f, pendingPod("newcomer-0"))
			createPod(t, f, pendingPod("newcomer-1"))
			waitFor(t, f.ctx, "the arrivals counted", func() bool { return r.acct.ChangedSince(judged) })
			if tt.refused {
				cycle.SetQueueVerdict(state, cycle.QueueVerdict{Refused: true, Message: `queue "owner" is at its capability`})
				r.handle = handle
			}
			if _, status := r.PostFilter(f.ctx, state, preemptor, unschedulableOnN()); !strings.Contains(status.Message(), tt.want) {
				t.Errorf("status %v, want %q", status, tt.want)
			}
			if tt.refused && !slices.Equal(handle.activated(), []string{"preemptor"}) {
				t.Errorf("activated %v; want the preemptor, to be judged again", handle.activated())
			}
		})
	}
}

// waitFor polls ok until it holds.
func waitFor(t *testing.T, ctx context.Context, what string, ok func() bool) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(ctx, time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return ok(), nil
	}); err != nil {
		t.Fatalf("never %s", what)
	}
}

func createPod(t *testing.T, f *nodeFixture, pod *v1.Pod) {
	t.Helper()
	if _, err := f.client.CoreV1().Pods(pod.Namespace).Create(f.ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// A snapshot built before a queue turned not reclaimable may still count what it holds above its
// share as spare; a plan on such a snapshot takes nothing from it.
func TestPlanTakesNothingFromAQueueNoLongerReclaimable(t *testing.T) {
	f := newNodeFixture(t, nil, ownerPod("low"))
	r := f.reclaim
	r.nominated = newNominated(schedulingv1beta1.PodGroupKey)
	waitFor(t, f.ctx, "the owner's low-priority pod counted", func() bool { return r.acct.Pods.HasBoundBelow("owner", 1) })
	queue := func(name string, reclaimable bool, allocated, deserved string) *policy.Queue {
		return &policy.Queue{Name: name, Parent: "root", Reclaimable: reclaimable, Allocated: cpu(allocated), Deserved: cpu(deserved)}
	}
	for _, reclaimable := range []bool{true, false} {
		snap := &policy.Snapshot{Changes: 2, Queues: map[string]*policy.Queue{
			"owner":    queue("owner", true, "1", "5"),
			"borrower": queue("borrower", reclaimable, "4", "1"),
		}, Spare: map[string]v1.ResourceList{"borrower": cpu("3")}}
		p, why := r.newPlan(snap, pendingPod("preemptor"), cpu("1"))
		if p == nil {
			t.Fatalf("reclaimable %v: no plan: %s", reclaimable, why)
		}
		if _, taken := p.spare["borrower"]; taken != reclaimable {
			t.Errorf("reclaimable %v: the plan's spare %v", reclaimable, p.spare)
		}
	}
}

// Only a pod its queue refused waits for the victims of its last preemption: one its queue admits
// reads the room on the nodes alone, and waits on the node its victims leave.
func TestAnAdmittedPreemptorWaitsOnTheNodeItsVictimsLeave(t *testing.T) {
	victim := borrowerPod("victim", 1)
	preemptor := pendingPod("preemptor")
	preemptor.Status.NominatedNodeName = "n"
	f := newNodeFixture(t, preemptor, victim, borrowerPod("low", 1), borrowerPod("high", 1))
	r := f.reclaim
	waitFor(t, f.ctx, "the victim counted", func() bool { return r.acct.Pods.Holds(victim) })
	r.inflight.candidate(preemptor.UID, "n", []*v1.Pod{victim})
	r.inflight.settle(preemptor.UID, "n")
	state := f.preFiltered(t, preemptor)
	result, status := r.PostFilter(f.ctx, state, preemptor, unschedulableOnN())
	if result == nil || result.NominatedNodeName != "n" || !strings.Contains(status.Message(), "pods leaving node n") {
		t.Errorf("got %+v, %v; want the pod nominated to n while its victim leaves", result, status)
	}
}
