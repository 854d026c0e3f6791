package reclaim

import (
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	quota "k8s.io/apiserver/pkg/quota/v1"
	resourcehelper "k8s.io/component-helpers/resource"
)

// nominated remembers the single pods reclaim nominated to a node and that are not bound yet: the
// room freed for them is their queue's already, and another pod of the queue that counted only the
// queue's bound pods would take back more than the queue's share. Gangs keep theirs in attempts.
type nominated struct {
	mu   sync.Mutex
	pods map[types.UID]nominee
}

type nominee struct {
	pod   *v1.Pod
	queue string
}

func newNominated() *nominated { return &nominated{pods: map[types.UID]nominee{}} }

// set records pod, of queue, as nominated to node; with node "", forgets it.
func (n *nominated) set(pod *v1.Pod, queue, node string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if node == "" {
		delete(n.pods, pod.UID)
		return
	}
	n.pods[pod.UID] = nominee{pod: pod, queue: queue}
}

// holding returns what queue's nominated pods other than except request, among those still pending
// (pending says so: neither bound nor deleted); it forgets the others.
func (n *nominated) holding(queue string, except types.UID, pending func(*v1.Pod) bool) v1.ResourceList {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := v1.ResourceList{}
	for uid, p := range n.pods {
		if !pending(p.pod) {
			delete(n.pods, uid)
			continue
		}
		if p.queue == queue && uid != except {
			out = quota.Add(out, resourcehelper.PodRequests(p.pod, resourcehelper.PodResourcesOptions{}))
		}
	}
	return out
}
