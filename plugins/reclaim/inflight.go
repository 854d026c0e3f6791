package reclaim

import (
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	quota "k8s.io/apiserver/pkg/quota/v1"
	resourcehelper "k8s.io/component-helpers/resource"
)

// inflight remembers the victims chosen but not yet gone: evictions run asynchronously, and until a
// victim is deleting, the accounting still counts it. The next pod's dry run must not count on it
// again, or a victim queue would be taken below its share and a gang below minMember.
type inflight struct {
	mu sync.Mutex
	// chosen holds, per preemptor and node ("uid/node"), the victims its dry run picked there.
	chosen map[string][]*v1.Pod
	// victims holds the victims of preemptions under way.
	victims map[types.UID]*v1.Pod
}

func newInflight() *inflight {
	return &inflight{chosen: map[string][]*v1.Pod{}, victims: map[types.UID]*v1.Pod{}}
}

func chosenKey(preemptor types.UID, node string) string { return string(preemptor) + "/" + node }

// candidate records the victims a dry run picked on a node for preemptor.
func (f *inflight) candidate(preemptor types.UID, node string, victims []*v1.Pod) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.chosen[chosenKey(preemptor, node)] = victims
}

// settle keeps the victims of the node the preemptor was nominated to (none when node is empty) and
// drops its other candidates.
func (f *inflight) settle(preemptor types.UID, node string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	prefix := string(preemptor) + "/"
	for key, victims := range f.chosen {
		if len(key) < len(prefix) || key[:len(prefix)] != prefix {
			continue
		}
		if node != "" && key == chosenKey(preemptor, node) {
			for _, v := range victims {
				f.victims[v.UID] = v
			}
		}
		delete(f.chosen, key)
	}
}

// add records victims chosen for a preemption under way.
func (f *inflight) add(victims []*v1.Pod) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, v := range victims {
		f.victims[v.UID] = v
	}
}

// evicting says whether the pod is the victim of a preemption under way.
func (f *inflight) evicting(uid types.UID) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.victims[uid]
	return ok
}

// pending returns, among the victims under way, those still alive (live says so), per queue what
// they hold and per gang how many they are; it forgets the others.
func (f *inflight) pending(live func(*v1.Pod) bool, queueOf func(*v1.Pod) (string, error), gangOf func(*v1.Pod) string) (map[string]v1.ResourceList, map[string]int, []*v1.Pod) {
	f.mu.Lock()
	defer f.mu.Unlock()
	byQueue, byGang := map[string]v1.ResourceList{}, map[string]int{}
	var alive []*v1.Pod
	for uid, pod := range f.victims {
		if !live(pod) {
			delete(f.victims, uid)
			continue
		}
		alive = append(alive, pod)
		if q, err := queueOf(pod); err == nil {
			byQueue[q] = quota.Add(byQueue[q], resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}))
		}
		if key := gangOf(pod); key != "" {
			byGang[key]++
		}
	}
	return byQueue, byGang, alive
}

// drop forgets a victim whose eviction failed: it stays, and holds its room.
func (f *inflight) drop(uid types.UID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.victims, uid)
}
