package reclaim

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
)

// When one eviction of a preemption fails, the Evaluator evicts none of the candidate's victims
// left: those stay, and no dry run counts them as going, nor does the preemptor wait for them. The
// victims whose eviction went through, and those terminating already, are still on their way out. A
// candidate whose eviction fails before its preemptor's cycle settles it keeps only those.
func TestAFailedEvictionLetsTheVictimsLeftStay(t *testing.T) {
	evicted, failing, terminating, untried := borrowerPod("evicted", 0), borrowerPod("failing", 0), borrowerPod("terminating", 0), borrowerPod("untried", 0)
	terminating.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	f := newNodeFixture(t, nil, evicted, failing, terminating, untried)
	f.client.PrependReactor("create", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
		create, ok := action.(k8stesting.CreateAction)
		if !ok || action.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		if eviction, ok := create.GetObject().(*policyv1.Eviction); ok && eviction.Name == "failing" {
			return true, nil, apierrors.NewTooManyRequests("the disruption budget allows no more", 10)
		}
		return true, nil, nil
	})
	r := f.reclaim
	victims := []*v1.Pod{evicted, failing, terminating, untried}
	counted := func(*v1.Pod, time.Time) bool { return true }
	for _, settled := range []bool{true, false} {
		preemptor := pendingPod(fmt.Sprintf("preemptor-settled-%v", settled))
		r.inflight.candidate(preemptor.UID, "n", victims)
		if settled {
			r.inflight.settle(preemptor.UID, "n")
		}
		if _, err := r.evict(f.ctx, failingCandidate{victims}, podPreemptor{preemptor}, evicted, Name); err != nil {
			t.Fatal(err)
		}
		if _, err := r.evict(f.ctx, failingCandidate{victims}, podPreemptor{preemptor}, failing, Name); err == nil {
			t.Fatal("the eviction the budget refused succeeded")
		}
		if !settled {
			r.inflight.settle(preemptor.UID, "n")
		}
		want := map[string]bool{"evicted": true, "failing": false, "terminating": true, "untried": false}
		for _, v := range victims {
			if got := r.inflight.evicting(v.UID); got != want[v.Name] {
				t.Errorf("settled %v: %s taken as going: %v, want %v", settled, v.Name, got, want[v.Name])
			}
		}
		if own := r.inflight.of[preemptor.UID]; len(own.pods) != 2 || !r.inflight.ownStill(preemptor.UID, counted) {
			t.Errorf("settled %v: the preemptor waits for %v, want the evicted and the terminating victims", settled, names(own.pods))
		}
		r.inflight = newInflight(r.clock)
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

// An eviction the API server refused (a budget's 429, a forbidden request) was not applied; one whose
// call ended without the server's word (cancelled, timed out, failed inside the server) may have been.
func TestAnsweredTellsARefusalFromNoWord(t *testing.T) {
	gr := policyv1.Resource("evictions")
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{apierrors.NewTooManyRequests("disruption budget", 0), true},
		{apierrors.NewForbidden(gr, "victim", fmt.Errorf("no")), true},
		{apierrors.NewInvalid(policyv1.SchemeGroupVersion.WithKind("Eviction").GroupKind(), "victim", nil), true},
		{context.Canceled, false},
		{fmt.Errorf("evict: %w", context.DeadlineExceeded), false},
		{apierrors.NewTimeoutError("slow", 1), false},
		{apierrors.NewServerTimeout(gr, "create", 1), false},
		{apierrors.NewInternalError(fmt.Errorf("etcd")), false},
	} {
		if got := answered(tt.err); got != tt.want {
			t.Errorf("answered(%v) = %t, want %t", tt.err, got, tt.want)
		}
	}
}
