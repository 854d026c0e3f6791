package reclaim

import (
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	quota "k8s.io/apiserver/pkg/quota/v1"
	resourcehelper "k8s.io/component-helpers/resource"
)

// nominated remembers the pods reclaim nominated to room it freed, single pods and gangs' members,
// until they bind or are deleted, or reclaim lets them go: that room is their queue's already, and
// another pod or gang of the queue that counted only the queue's bound pods would take back more
// than the queue's share.
type nominated struct {
	// gangKey names a pod's gang (accounting.Gangs.Key).
	gangKey func(*v1.Pod) string

	mu   sync.Mutex
	pods map[types.UID]nominee
}

type nominee struct {
	pod         *v1.Pod
	queue, gang string
	requests    v1.ResourceList
}

func newNominated(gangKey func(*v1.Pod) string) *nominated {
	return &nominated{pods: map[types.UID]nominee{}, gangKey: gangKey}
}

// set records pod, of queue, as nominated to node; with node "", forgets it.
func (n *nominated) set(pod *v1.Pod, queue, node string) {
	if node == "" {
		n.forget(pod.UID)
		return
	}
	entry := nominee{pod: pod, queue: queue, gang: n.gangKey(pod),
		requests: resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.pods[pod.UID] = entry
}

// forget lets the pod's nomination go.
func (n *nominated) forget(uid types.UID) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.pods, uid)
}

// holding returns what queue's nominated pods request, but for self and the members of its gang (a
// gang's plan counts those in its own request), among those still pending (pending says so: neither
// bound nor deleted); it forgets the others.
func (n *nominated) holding(queue string, self *v1.Pod, pending func(*v1.Pod) bool) v1.ResourceList {
	gang := n.gangKey(self)
	n.mu.Lock()
	defer n.mu.Unlock()
	out := v1.ResourceList{}
	for uid, p := range n.pods {
		switch {
		case !pending(p.pod):
			delete(n.pods, uid)
		case p.queue == queue && uid != self.UID && (gang == "" || p.gang != gang):
			out = quota.Add(out, p.requests)
		}
	}
	return out
}
