package accounting

import (
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// WaitingPod is a live pod counted against a queue that does not hold its requests yet.
type WaitingPod struct {
	Pod *v1.Pod
	// Requests is what the accounting counts it as asking for; read, never changed.
	Requests v1.ResourceList
}

// WaitingPods returns, by queue, the live pods the accounting counts and does not count as holding:
// not bound, and not assumed at Reserve. It reads every pod of the informer: a view's request, not
// a scheduling cycle's.
func (u *PodTable) WaitingPods() map[string][]WaitingPod {
	if u.live == nil {
		return nil
	}
	objs := u.live.List()
	u.mu.RLock()
	defer u.mu.RUnlock()
	out := map[string][]WaitingPod{}
	for _, obj := range objs {
		pod, ok := obj.(*v1.Pod)
		if !ok {
			continue
		}
		if p, counted := u.pods[pod.UID]; counted && !p.holds() {
			out[p.queue] = append(out[p.queue], WaitingPod{Pod: pod, Requests: p.requests})
		}
	}
	return out
}

// Nodes lists the cluster's nodes, as the capacity counts them.
func (a *Accounting) Nodes() ([]*v1.Node, error) { return a.nodes.List(labels.Everything()) }

// LivePods lists every pod the scheduler's informer holds, of every scheduler: those it has not
// seen end.
func (u *PodTable) LivePods() []*v1.Pod {
	objs := u.live.List()
	out := make([]*v1.Pod, 0, len(objs))
	for _, obj := range objs {
		if pod, ok := obj.(*v1.Pod); ok {
			out = append(out, pod)
		}
	}
	return out
}

// OnPodFinished registers f to be told of each queue-scheduler pod that ended (Succeeded or
// Failed), once, as the informer shows it then: as it turns terminal or, for an informer that
// leaves terminal pods out (the scheduler's), as it leaves. Such an informer is told of a pod that
// turned terminal as a deletion that carries the pod as it was before, running: f is then told of
// it as it was, and the end is the moment it left. f must not block.
func (u *PodTable) OnPodFinished(f func(*v1.Pod)) error {
	var mu sync.Mutex
	told := map[types.UID]bool{} // turned terminal in the informer, not deleted yet
	_, err := u.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, obj any) {
			if pod := podOf(obj); isQueuePod(pod) && ended(pod) && !ended(podOf(old)) {
				mu.Lock()
				told[pod.UID] = true
				mu.Unlock()
				f(pod)
			}
		},
		DeleteFunc: func(obj any) {
			pod := podOf(obj)
			if !isQueuePod(pod) {
				return
			}
			mu.Lock()
			already := told[pod.UID]
			delete(told, pod.UID)
			mu.Unlock()
			if !already && (ended(pod) || leftRunning(pod)) {
				f(pod)
			}
		},
	})
	return err
}

// leftRunning says whether a pod that left the informer was running, bound and not being deleted:
// it left because it turned terminal (a pod being deleted carries its deletionTimestamp).
func leftRunning(pod *v1.Pod) bool {
	return pod.Spec.NodeName != "" && pod.DeletionTimestamp == nil && pod.Status.Phase == v1.PodRunning
}

// ended says whether a pod ran to its end.
func ended(pod *v1.Pod) bool {
	return pod != nil && (pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed)
}
