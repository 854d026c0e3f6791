package gang

import (
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/utils/clock"

	"github.com/queue-scheduler/queue-scheduler/pkg/cycle"
)

// freedWindow bounds how long a freeing is remembered: the scheduler's cache follows the informer
// within moments, and a snapshot that still lacks a freeing this old is not waited for.
const freedWindow = time.Minute

// freedRoom remembers the room the pod and node informers saw freed (a bound pod gone, a node
// added) until a scheduling snapshot shows it. The scheduler's cache hears of an event on a handler
// of its own, so an attempt can start on a snapshot taken before a freeing the plugin has already
// acted on: a gang that attempt turns away would be denied past the last event that could let it
// in.
type freedRoom struct {
	clock clock.PassiveClock

	mu    sync.Mutex
	pods  map[types.UID]freedPod
	nodes map[string]time.Time
}

// freedPod is a bound pod that went away: the node it left, and when.
type freedPod struct {
	node string
	at   time.Time
}

func newFreedRoom(clk clock.PassiveClock) *freedRoom {
	return &freedRoom{clock: clk, pods: map[types.UID]freedPod{}, nodes: map[string]time.Time{}}
}

// podGone notes that bound pod went away.
func (f *freedRoom) podGone(pod *v1.Pod) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pods[pod.UID] = freedPod{node: pod.Spec.NodeName, at: f.clock.Now()}
}

// nodeAdded notes that node appeared.
func (f *freedRoom) nodeAdded(node *v1.Node) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nodes[node.Name] = f.clock.Now()
}

// unseenBy says whether nodes, a scheduling cycle's snapshot, lacks room the informers saw freed:
// a bound pod gone that is still on its node there, or a node added that is not there yet. What the
// snapshot shows, and what is older than freedWindow, is forgotten.
func (f *freedRoom) unseenBy(nodes fwk.NodeInfoLister) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	stale := f.clock.Now().Add(-freedWindow)
	unseen := false
	for uid, p := range f.pods {
		if p.at.Before(stale) || !cycle.Shows(nodes, p.node, uid) {
			delete(f.pods, uid)
			continue
		}
		unseen = true
	}
	for name, at := range f.nodes {
		if _, err := nodes.Get(name); err == nil || at.Before(stale) {
			delete(f.nodes, name)
			continue
		}
		unseen = true
	}
	return unseen
}
