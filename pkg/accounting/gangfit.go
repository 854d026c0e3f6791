package accounting

import (
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/gangs"
	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
)

// GangNeverFits says, on snap, which capability of pg's queue or of an ancestor the least its
// members making it whole ask for together exceeds (gangs.Least), or nil: nil too while its members
// cannot make it whole. Each member is admitted on its own request, and a PodGroup without
// minResources says nothing of its size at admission, so a gang can be let in that can never run.
// Gang's gate asks for each member, and the controller for each change of a member: the verdict is
// kept per gang while its spec, its number of live members and the queues' specs the snapshot rests
// on stay the same.
func (a *Accounting) GangNeverFits(snap *policy.Snapshot, pg *schedulingv1beta1.PodGroup) *policy.Refusal {
	queue := a.Store.QueueOfPodGroup(pg)
	capped := policy.Capped(snap, queue)
	if len(capped) == 0 {
		return nil
	}
	key := pg.Namespace + "/" + pg.Name
	members := a.Gangs.Members(key)
	return a.gangFits.verdict(key, gangFit{queue: queue, members: len(members), specs: snap.QueueSpecs, generation: pg.Generation}, func() *policy.Refusal {
		least, ok := gangs.Least(pg, members, podRequests, capped)
		if !ok {
			return nil
		}
		refusal := policy.NeverFitsIn(snap, queue, least)
		if refusal != nil {
			refusal.Message = fmt.Sprintf("podgroup %s cannot run its %d members together: %s", key, pg.MinMemberOrOne(), refusal.Message)
		}
		return refusal
	})
}

// gangFits keeps, per gang, its latest GangNeverFits verdict and what it was judged on.
type gangFits struct {
	mu    sync.Mutex
	known map[string]gangFit
}

// gangFit is a gang's verdict, judged in queue on members live members and the PodGroup's
// generation, under the queues' specs of version specs.
type gangFit struct {
	queue      string
	members    int
	specs      int64
	generation int64
	refusal    *policy.Refusal
}

// verdict is the gang key's verdict on what on says: the one kept, or judge's.
func (f *gangFits) verdict(key string, on gangFit, judge func() *policy.Refusal) *policy.Refusal {
	f.mu.Lock()
	kept, ok := f.known[key]
	f.mu.Unlock()
	if refusal := kept.refusal; ok {
		if kept.refusal = nil; kept == on {
			return refusal
		}
	}
	on.refusal = judge()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.known == nil {
		f.known = map[string]gangFit{}
	}
	f.known[key] = on
	return on.refusal
}

// forget drops what is kept of the gang key, whose PodGroup is gone.
func (f *gangFits) forget(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.known, key)
}

// podRequests is what pod asks for, as kube-scheduler counts it.
func podRequests(pod *v1.Pod) v1.ResourceList {
	return resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
}
