package proportion

import (
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// rejectedPods indexes by queue the pods this plugin turned away, so that a change to a queue's
// share brings back exactly its pods.
type rejectedPods struct {
	mu      sync.Mutex
	byPod   map[types.UID]string
	byQueue map[string]map[types.UID]*v1.Pod
}

func newRejectedPods() *rejectedPods {
	return &rejectedPods{byPod: map[types.UID]string{}, byQueue: map[string]map[types.UID]*v1.Pod{}}
}

func (r *rejectedPods) add(pod *v1.Pod, queue string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.removeLocked(pod.UID)
	r.byPod[pod.UID] = queue
	if r.byQueue[queue] == nil {
		r.byQueue[queue] = map[types.UID]*v1.Pod{}
	}
	r.byQueue[queue][pod.UID] = pod
}

func (r *rejectedPods) remove(pod *v1.Pod) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.removeLocked(pod.UID)
}

func (r *rejectedPods) removeLocked(uid types.UID) {
	queue, ok := r.byPod[uid]
	if !ok {
		return
	}
	delete(r.byPod, uid)
	delete(r.byQueue[queue], uid)
	if len(r.byQueue[queue]) == 0 {
		delete(r.byQueue, queue)
	}
}

// pods returns the rejected pods of queue, keyed as the scheduling queue's Activate expects.
func (r *rejectedPods) pods(queue string) map[string]*v1.Pod {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]*v1.Pod, len(r.byQueue[queue]))
	for _, pod := range r.byQueue[queue] {
		out[pod.Namespace+"/"+pod.Name] = pod
	}
	return out
}
