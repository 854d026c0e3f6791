package queuestate

import (
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// A bucket names what a held pod waits for, so that a change to that thing finds its pods at once.
type bucket string

const namespacesBucket bucket = "namespaces"

func queueBucket(queue string) bucket { return bucket("queue/" + queue) }

func podGroupBucket(namespace, name string) bucket {
	return bucket("podgroup/" + namespace + "/" + name)
}

// heldPods indexes the pods this plugin holds by what they wait for.
type heldPods struct {
	mu       sync.Mutex
	byPod    map[types.NamespacedName]bucket
	byBucket map[bucket]map[types.NamespacedName]*v1.Pod
}

func newHeldPods() *heldPods {
	return &heldPods{
		byPod:    map[types.NamespacedName]bucket{},
		byBucket: map[bucket]map[types.NamespacedName]*v1.Pod{},
	}
}

func keyOf(pod *v1.Pod) types.NamespacedName {
	return types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}
}

// hold records that pod waits for b, replacing what it waited for before.
func (h *heldPods) hold(pod *v1.Pod, b bucket) {
	key := keyOf(pod)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.removeLocked(key)
	h.byPod[key] = b
	pods := h.byBucket[b]
	if pods == nil {
		pods = map[types.NamespacedName]*v1.Pod{}
		h.byBucket[b] = pods
	}
	pods[key] = pod
}

// release forgets pod.
func (h *heldPods) release(pod *v1.Pod) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.removeLocked(keyOf(pod))
}

func (h *heldPods) removeLocked(key types.NamespacedName) {
	b, ok := h.byPod[key]
	if !ok {
		return
	}
	delete(h.byPod, key)
	delete(h.byBucket[b], key)
	if len(h.byBucket[b]) == 0 {
		delete(h.byBucket, b)
	}
}

// pods returns the pods waiting for b, keyed as the scheduling queue's Activate expects.
func (h *heldPods) pods(b bucket) map[string]*v1.Pod {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]*v1.Pod, len(h.byBucket[b]))
	for key, pod := range h.byBucket[b] {
		out[key.String()] = pod
	}
	return out
}

// names returns the names of the pods waiting for b.
func (h *heldPods) names(b bucket) []types.NamespacedName {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]types.NamespacedName, 0, len(h.byBucket[b]))
	for key := range h.byBucket[b] {
		out = append(out, key)
	}
	return out
}
