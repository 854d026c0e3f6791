package reclaim

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
)

// When one eviction of a preemption fails, the Evaluator evicts none of the candidate's victims
// left: the preemptor waits for none of them, and no dry run counts them as going.
func TestAFailedEvictionLetsTheVictimsStay(t *testing.T) {
	first, second := borrowerPod("first", 0), borrowerPod("second", 0)
	f := newNodeFixture(t, nil, first, second)
	f.client.PrependReactor("create", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		return true, nil, apierrors.NewTooManyRequests("the disruption budget allows no more", 10)
	})
	r := f.reclaim
	preemptor := pendingPod("preemptor")
	victims := []*v1.Pod{first, second}
	r.inflight.candidate(preemptor.UID, "n", victims)
	r.inflight.settle(preemptor.UID, "n")
	counted := func(*v1.Pod, time.Time) bool { return true }
	if !r.inflight.ownStill(preemptor.UID, counted) {
		t.Fatal("the preemptor does not wait for the victims of its preemption")
	}
	if _, err := r.evict(f.ctx, failingCandidate{victims}, podPreemptor{preemptor}, first, Name); err == nil {
		t.Fatal("the eviction the budget refused succeeded")
	}
	if r.inflight.ownStill(preemptor.UID, counted) {
		t.Error("the preemptor still waits for victims that stay")
	}
	for _, v := range victims {
		if r.inflight.evicting(v.UID) {
			t.Errorf("%s is still taken as going", v.Name)
		}
	}
}

// failingCandidate is a node's candidate of the Evaluator, with victims.
type failingCandidate struct{ pods []*v1.Pod }

func (c failingCandidate) Victims() *extenderv1.Victims { return &extenderv1.Victims{Pods: c.pods} }
func (c failingCandidate) Name() string                 { return "n" }
func (c failingCandidate) NumPodGroupDisruptions() int  { return 0 }

// podPreemptor is a single pod that preempts.
type podPreemptor struct{ *v1.Pod }

func (p podPreemptor) UID() types.UID           { return p.Pod.UID }
func (p podPreemptor) SchedulerName() string    { return p.Spec.SchedulerName }
func (p podPreemptor) Obj() runtime.Object      { return p.Pod }
func (p podPreemptor) Pods() map[string]*v1.Pod { return map[string]*v1.Pod{p.Name: p.Pod} }
func (p podPreemptor) Priority() int32          { return *p.Spec.Priority }
func (p podPreemptor) Type() string             { return "pod" }
