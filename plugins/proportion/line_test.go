package proportion

import (
	"context"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/cycle"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

var t0 = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

// waitingPod is a pod of queue created at t0 plus age seconds, asking for cpu.
func waitingPod(name, queue string, age int, cpu string) *v1.Pod {
	pod := util.MakePod("ns", name).UID(name).Label(schedulingv1beta1.QueueLabel, queue).
		Req(map[v1.ResourceName]string{v1.ResourceCPU: cpu}).Obj()
	pod.CreationTimestamp = metav1.NewTime(t0.Add(time.Duration(age) * time.Second))
	return pod
}

// all says every pod still waits.
func all(*v1.Pod) bool { return true }

func names(pods map[string]*v1.Pod) []string {
	out := make([]string, 0, len(pods))
	for _, pod := range pods {
		out = append(out, pod.Name)
	}
	sort.Strings(out)
	return out
}

// Room that frees is offered to each queue's first waiting pods, in the queue's order (priority,
// then age, then name), as many as fit in it together; a pod larger than the room is passed over.
func TestLineOffersRoomToEachQueuesFirstPods(t *testing.T) {
	l := newLine()
	cpu := func(n string) v1.ResourceList {
		return util.ResourceList(map[v1.ResourceName]string{v1.ResourceCPU: n})
	}
	// Each room frees once the pods let in for the one before were tried.
	offer := func(room v1.ResourceList, waiting func(*v1.Pod) bool) map[string]*v1.Pod {
		out := l.next(accounting.RoomFreed{Requests: room}, t0, waiting)
		for _, pod := range out {
			l.tried(pod, pod.Labels[schedulingv1beta1.QueueLabel], t0, 0, false)
		}
		return out
	}
	add := func(pod *v1.Pod) {
		l.add(pod, pod.Labels[schedulingv1beta1.QueueLabel], resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}))
	}
	urgent := waitingPod("urgent", "a", 30, "1")
	urgent.Spec.Priority = new(int32)
	*urgent.Spec.Priority = 10
	for _, pod := range []*v1.Pod{
		waitingPod("young", "a", 20, "1"), waitingPod("old", "a", 0, "1"), waitingPod("big", "a", 10, "4"),
		waitingPod("b-young", "b", 5, "1"), waitingPod("b-old", "b", 1, "1"), urgent,
	} {
		add(pod)
	}
	tests := []struct {
		room string
		want []string
	}{
		{room: "1", want: []string{"b-old", "urgent"}},
		{room: "2", want: []string{"b-old", "b-young", "old", "urgent"}},
		{room: "3", want: []string{"b-old", "b-young", "old", "urgent", "young"}},
		{room: "6", want: []string{"b-old", "b-young", "big", "old", "urgent"}},
		{room: "500m", want: []string{}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, names(offer(cpu(tt.room), all))); diff != "" {
			t.Errorf("room of %s cpu (-want,+got):\n%s", tt.room, diff)
		}
	}
	// A pod bound, gone or turned away by its queue leaves the line; one deleted and created again
	// under its name leaves it by its UID.
	l.remove(urgent)
	again := waitingPod("old", "a", 0, "1")
	again.UID = types.UID("old-again")
	add(again)
	l.remove(waitingPod("old", "a", 0, "1"))
	if diff := cmp.Diff([]string{"b-old", "old"}, names(offer(cpu("1"), all))); diff != "" {
		t.Errorf("after removals (-want,+got):\n%s", diff)
	}
	if got := offer(cpu("1"), all)["ns/old"]; got == nil || got.UID != "old-again" {
		t.Errorf("the pod created again under the name of one removed: got %v", got)
	}
	// A pod the line missed leaving is passed over, and forgotten.
	gone := func(pod *v1.Pod) bool { return pod.UID != "old-again" }
	if diff := cmp.Diff([]string{"b-old", "young"}, names(offer(cpu("1"), gone))); diff != "" {
		t.Errorf("with a pod gone (-want,+got):\n%s", diff)
	}
	if _, kept := l.queueOf["old-again"]; kept {
		t.Error("a pod gone is still in the line")
	}
	l.remove(waitingPod("young", "a", 20, "1"))
	l.remove(waitingPod("big", "a", 10, "4"))
	if _, ok := l.queues["a"]; ok || l.queueOf["young"] != "" {
		t.Errorf("a queue with no waiting pod is still kept: %v", l.queues["a"])
	}
}

// Room that frees while the pods let in for earlier room have not been tried goes to the pods behind
// them, which the younger pods of their queue then give way to until they are tried, and are let in
// then; a pod tried, or held before its try, no longer takes room nor holds back the pods behind it,
// nor after letInWait, and a pod let in and never tried is not let in again.
func TestPodsLetInKeepTheirRoomUntilTheirTry(t *testing.T) {
	l := newLine()
	oneCPU := accounting.RoomFreed{Requests: util.ResourceList(map[v1.ResourceName]string{v1.ResourceCPU: "1"}), Pod: "gone", Node: "n"}
	first, second, third, fourth := waitingPod("first", "a", 1, "1"), waitingPod("second", "a", 2, "1"),
		waitingPod("third", "a", 3, "1"), waitingPod("fourth", "a", 4, "1")
	for _, pod := range []*v1.Pod{first, second, third, fourth} {
		l.add(pod, "a", resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}))
	}
	if diff := cmp.Diff([]string{"first"}, names(l.next(oneCPU, t0, all))); diff != "" {
		t.Errorf("first room (-want,+got):\n%s", diff)
	}
	soon := t0.Add(letInWait / 2)
	if diff := cmp.Diff([]string{"second"}, names(l.next(oneCPU, soon, all))); diff != "" {
		t.Errorf("room freed before the first pod's try (-want,+got):\n%s", diff)
	}
	if got := l.tried(fourth, "a", soon, 0, true); got.ok || !got.ahead {
		t.Errorf("a younger pod tried while older ones were let in: %+v; want it to give way", got)
	}
	got := l.tried(first, "a", soon, 0, true)
	if !got.ok || got.ahead || got.letIn != (cycle.LetIn{Node: "n", Pod: "gone"}) {
		t.Errorf("the first pod's try: %+v; want it let in for the room of pod gone on n", got)
	}
	if diff := cmp.Diff([]string{"fourth"}, names(got.release)); diff != "" {
		t.Errorf("let in after the first pod's try (-want,+got):\n%s", diff)
	}
	if got := l.tried(first, "a", soon, 0, true); got.ok {
		t.Error("a pod's second try reads the room it was let in for again")
	}
	l.held(second)
	if got := l.tried(fourth, "a", soon, 0, true); got.ok || got.ahead {
		t.Errorf("with the pods let in tried or held: the younger pod %+v; want it neither let in nor giving way", got)
	}
	if got := l.tried(fourth, "a", soon, 0, false); got.ahead {
		t.Error("a pod its queue turned away gives way")
	}
	if diff := cmp.Diff([]string{"first"}, names(l.next(oneCPU, soon, all))); diff != "" {
		t.Errorf("room freed once they were tried (-want,+got):\n%s", diff)
	}
	expired := t0.Add(2 * letInWait)
	if got := l.tried(fourth, "a", expired, 0, true); got.ahead {
		t.Error("a pod let in and never tried still holds back younger pods after letInWait")
	}
	if diff := cmp.Diff([]string{"second"}, names(l.next(oneCPU, expired, all))); diff != "" {
		t.Errorf("room freed while the first pod, let in, was never tried (-want,+got):\n%s", diff)
	}
	l.tried(first, "a", expired, 0, true)
	l.tried(second, "a", expired, 0, true)
	// Room the accounting counts freed already and the line was not offered yet (a later Seq) is for
	// the older pods: the younger gives way to them until it is offered, and is let in then.
	offered := oneCPU
	offered.Seq = 7
	l.next(offered, t0.Add(3*letInWait), all)
	later := t0.Add(5 * letInWait)
	if got := l.tried(fourth, "a", later, 8, true); !got.ahead {
		t.Error("a younger pod does not give way while room freed is on its way to the line")
	}
	if got := l.tried(first, "a", later, 8, true); got.ahead {
		t.Error("the queue's first pod gives way to room on its way, which is its own")
	}
	if got := l.tried(fourth, "a", later, 7, true); got.ahead {
		t.Error("a younger pod gives way for room offered already")
	}
	l.tried(fourth, "a", later, 8, true)
	offered.Seq = 8
	if released := names(l.next(offered, later, all)); !slices.Contains(released, "fourth") {
		t.Errorf("room offered lets in %v, not the pod that gave way to it", released)
	}
}

// The plugin keeps in the line the pods that wait for room, admitted by their queue or turned away
// at its share; not gang members. A pod reserved leaves it. Room freed lets in the first of them.
func TestRoomFreedLetsInTheQueuesFirstWaitingPods(t *testing.T) {
	node := util.MakeNode("node", "4", "8Gi")
	acct := newTestAccountingWith(t, []runtime.Object{node}, util.MakeQueue("root").Obj(), util.MakeQueue("a").Obj(),
		util.MakeQueue("b").Obj(), util.MakePodGroup("ns", "gang").Queue("a").MinMember(1).Obj())
	handle := &activations{}
	p := newTestPlugin(acct, handle)
	member := waitingPod("member", "a", 0, "1")
	member.Labels[schedulingv1beta1.PodGroupLabel] = "gang"
	pods := []*v1.Pod{waitingPod("second", "a", 2, "1"), waitingPod("first", "a", 1, "1"), waitingPod("reserved", "a", 0, "1"), member}
	for _, pod := range pods {
		if _, status := p.PreFilter(context.Background(), framework.NewCycleState(), pod, nil); status.Code() != fwk.Skip {
			t.Fatalf("PreFilter of %s: %v, want the queue to admit it", pod.Name, status)
		}
	}
	if _, kept := p.line.queueOf[member.UID]; kept {
		t.Error("a gang member is kept in the line")
	}
	// More than queue b deserves of the 4 cpu: turned away at its share.
	overShare := waitingPod("over-share", "b", 0, "3")
	if _, status := p.PreFilter(context.Background(), framework.NewCycleState(), overShare, nil); status.IsSuccess() {
		t.Fatalf("PreFilter of %s: %v, want it turned away at its share", overShare.Name, status)
	}
	p.Reserve(context.Background(), framework.NewCycleState(), pods[2], "node")
	p.onRoomFreed(accounting.RoomFreed{Queue: "a", Requests: util.ResourceList(map[v1.ResourceName]string{v1.ResourceCPU: "3"})})
	got := handle.names()
	sort.Strings(got)
	if diff := cmp.Diff([]string{"first", "over-share", "second"}, got); diff != "" {
		t.Errorf("let in on room freed (-want,+got):\n%s", diff)
	}
}

// A pod let in for the room a pod leaving its node freed carries that room into its next cycle, once,
// where Reclaim holds it for the pod while the scheduler's snapshot lags the accounting; a younger
// pod tried before it gives way, and is let in once it was tried. A pod not let in carries nothing,
// nor does a pod let in for room no pod left (one that asks for less).
func TestALetInPodCarriesItsRoomIntoItsNextCycle(t *testing.T) {
	node := util.MakeNode("node", "4", "8Gi")
	acct := newTestAccountingWith(t, []runtime.Object{node}, util.MakeQueue("root").Obj(), util.MakeQueue("a").Obj())
	handle := &activations{}
	p := newTestPlugin(acct, handle)
	first, second := waitingPod("first", "a", 1, "1"), waitingPod("second", "a", 2, "1")
	preFilter := func(pod *v1.Pod) fwk.CycleState {
		state := framework.NewCycleState()
		if _, status := p.PreFilter(context.Background(), state, pod, nil); status.Code() != fwk.Skip {
			t.Fatalf("PreFilter of %s: %v, want the queue to admit it", pod.Name, status)
		}
		return state
	}
	preFilter(first)
	preFilter(second)
	oneCPU := util.ResourceList(map[v1.ResourceName]string{v1.ResourceCPU: "1"})
	p.onRoomFreed(accounting.RoomFreed{Queue: "a", Requests: oneCPU, Pod: "gone", Node: "node"})
	// Tried before the first pod, the second gives way to it, and is let in once the first is tried.
	state := framework.NewCycleState()
	if _, status := p.PreFilter(context.Background(), state, second, nil); status.Code() != fwk.Unschedulable ||
		status.Message() != `older pods of queue "a" were let in for the room that freed, and go first` {
		t.Errorf("PreFilter of the second pod before the first's try: %v", status)
	}
	if v, ok := cycle.QueueVerdictOf(state); !ok || !v.Behind {
		t.Errorf("the second pod's verdict %+v: want it behind older pods, for Reclaim to take nothing back", v)
	}
	if got, ok := cycle.LetInOf(preFilter(first)); !ok || got != (cycle.LetIn{Node: "node", Pod: "gone"}) {
		t.Errorf("the first pod's cycle carries %+v (%t), want the room of pod gone on node", got, ok)
	}
	if diff := cmp.Diff([]string{"first", "second"}, handle.names()); diff != "" {
		t.Errorf("let in (-want,+got):\n%s", diff)
	}
	if got, ok := cycle.LetInOf(preFilter(first)); ok {
		t.Errorf("the first pod's next cycle carries %+v again", got)
	}
	if got, ok := cycle.LetInOf(preFilter(second)); ok {
		t.Errorf("the second pod, not let in, carries %+v", got)
	}
	p.onRoomFreed(accounting.RoomFreed{Queue: "a", Requests: oneCPU})
	if got, ok := cycle.LetInOf(preFilter(first)); ok {
		t.Errorf("room no pod left is carried as %+v", got)
	}
}
