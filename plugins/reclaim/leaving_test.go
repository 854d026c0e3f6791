package reclaim

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/cycle"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// A pod let in for room that a pod leaving its node freed, as the accounting counted it, is
// nominated there while the cycle's snapshot still holds the pod that left: the room is kept from
// the pods tried before the scheduler's cache counts it, and nothing is evicted. Room the snapshot
// counts already, a pod that does not fit even then, a pod nominated already, or a pod let in for
// nothing, is not held.
func TestRoomLetInForIsHeldUntilTheSnapshotCountsIt(t *testing.T) {
	left, low, high := borrowerPod("left", 1), borrowerPod("low", 1), borrowerPod("high", 100)
	f := newNodeFixture(t, nil, left, low, high)
	r := f.reclaim
	cycleOf := func(pod *v1.Pod, letIn *cycle.LetIn) fwk.CycleState {
		state := f.preFiltered(t, pod)
		if letIn != nil {
			cycle.SetLetIn(state, *letIn)
		}
		return state
	}
	preemptor := pendingPod("preemptor")
	result, status := r.PostFilter(f.ctx, cycleOf(preemptor, &cycle.LetIn{Node: "n", Pod: left.UID}), preemptor, unschedulableOnN())
	if result == nil || result.Mode() != fwk.ModeOverride || result.NominatedNodeName != "n" ||
		status.Message() != "reclaim: waiting for the scheduler to count the room freed on node n" {
		t.Errorf("got %+v, %v; want the pod nominated to n while the snapshot still holds the pod that left", result, status)
	}
	if len(r.inflight.victims) != 0 {
		t.Errorf("evicted %v for room freed already", r.inflight.victims)
	}
	nominated := pendingPod("nominated")
	nominated.Status.NominatedNodeName = "elsewhere"
	twoCPUs := util.MakePod("ns", "two-cpus").UID("two-cpus").Label(schedulingv1beta1.QueueLabel, "owner").Priority(1).
		Req(map[v1.ResourceName]string{v1.ResourceCPU: "2"}).Obj()
	for _, tt := range []struct {
		name  string
		pod   *v1.Pod
		letIn *cycle.LetIn
	}{
		{"let in for nothing", preemptor, nil},
		{"the snapshot counts the pod gone", preemptor, &cycle.LetIn{Node: "n", Pod: "counted-already"}},
		{"a node the snapshot does not hold", preemptor, &cycle.LetIn{Node: "elsewhere", Pod: left.UID}},
		{"the pod does not fit once it is gone", twoCPUs, &cycle.LetIn{Node: "n", Pod: left.UID}},
		{"the pod is nominated already, where its plan put it", nominated, &cycle.LetIn{Node: "n", Pod: left.UID}},
	} {
		if node := r.roomLetInFor(f.ctx, cycleOf(tt.pod, tt.letIn), tt.pod); node != "" {
			t.Errorf("%s: room held on node %q", tt.name, node)
		}
	}
}
