// Package podindex indexes pods that a plugin turned away by what they wait for, so that when that
// thing changes the plugin finds exactly those pods to bring back, without a scan.
package podindex

import (
	"maps"
	"slices"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// Index maps wait keys (a queue, a PodGroup…) to the pods waiting for them; a pod waits for one key
// at a time. It is safe for concurrent use.
type Index struct {
	mu    sync.Mutex
	byPod map[types.NamespacedName]string
	byKey map[string]map[types.NamespacedName]*v1.Pod
}

// New returns an empty index.
func New() *Index {
	return &Index{byPod: map[types.NamespacedName]string{}, byKey: map[string]map[types.NamespacedName]*v1.Pod{}}
}

func nameOf(pod *v1.Pod) types.NamespacedName {
	return types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}
}

// Add records that pod waits for key, replacing what it waited for before.
func (x *Index) Add(pod *v1.Pod, key string) {
	name := nameOf(pod)
	x.mu.Lock()
	defer x.mu.Unlock()
	x.removeLocked(name)
	x.byPod[name] = key
	if x.byKey[key] == nil {
		x.byKey[key] = map[types.NamespacedName]*v1.Pod{}
	}
	x.byKey[key][name] = pod
}

// Remove forgets pod.
func (x *Index) Remove(pod *v1.Pod) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.removeLocked(nameOf(pod))
}

func (x *Index) removeLocked(name types.NamespacedName) {
	key, ok := x.byPod[name]
	if !ok {
		return
	}
	delete(x.byPod, name)
	delete(x.byKey[key], name)
	if len(x.byKey[key]) == 0 {
		delete(x.byKey, key)
	}
}

// Pods returns the pods waiting for key, keyed "namespace/name" as the scheduling queue's Activate
// expects.
func (x *Index) Pods(key string) map[string]*v1.Pod {
	x.mu.Lock()
	defer x.mu.Unlock()
	out := make(map[string]*v1.Pod, len(x.byKey[key]))
	for name, pod := range x.byKey[key] {
		out[name.String()] = pod
	}
	return out
}

// Keys returns the keys some pod waits for.
func (x *Index) Keys() []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	return slices.Collect(maps.Keys(x.byKey))
}

// Names returns the names of the pods waiting for key.
func (x *Index) Names(key string) []types.NamespacedName {
	x.mu.Lock()
	defer x.mu.Unlock()
	out := make([]types.NamespacedName, 0, len(x.byKey[key]))
	for name := range x.byKey[key] {
		out = append(out, name)
	}
	return out
}

// Take returns the pods waiting for key, keyed like Pods, and forgets them: for a wait that one event
// ends, so that the same event does not bring them back again and again.
func (x *Index) Take(key string) map[string]*v1.Pod {
	x.mu.Lock()
	defer x.mu.Unlock()
	out := make(map[string]*v1.Pod, len(x.byKey[key]))
	for name, pod := range x.byKey[key] {
		out[name.String()] = pod
		delete(x.byPod, name)
	}
	delete(x.byKey, key)
	return out
}

// ForgetOnBindOrDelete removes from the index every pod the informer shows bound (when it becomes
// so) or deleted: such a pod waits for nothing any more, and the index must not keep it for ever.
func (x *Index) ForgetOnBindOrDelete(pods cache.SharedIndexInformer) error {
	_, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(oldObj, obj any) {
			old, okOld := oldObj.(*v1.Pod)
			pod, ok := obj.(*v1.Pod)
			if okOld && ok && old.Spec.NodeName == "" && pod.Spec.NodeName != "" {
				x.Remove(pod)
			}
		},
		DeleteFunc: func(obj any) {
			if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tombstone.Obj
			}
			if pod, ok := obj.(*v1.Pod); ok {
				x.Remove(pod)
			}
		},
	})
	return err
}
