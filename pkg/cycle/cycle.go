// Package cycle holds the typed values queue-scheduler's plugins leave for each other in the state
// of a scheduling cycle: the one snapshot of the queues that every plugin of the cycle reads, and
// each plugin's verdict that another plugin acts on. A plugin reads another's verdict here, typed,
// never by importing that plugin or parsing its message.
package cycle

import (
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
)

// Reader is what the readers here read: a pod's cycle state, or a pod group's in kube-scheduler's
// pod-group cycle.
type Reader interface {
	Read(key fwk.StateKey) (fwk.StateData, error)
}

// Writer is what the writers here write to.
type Writer interface {
	Write(key fwk.StateKey, val fwk.StateData)
}

const (
	snapshotKey       fwk.StateKey = "queue-scheduler.io/snapshot"
	queueVerdictKey   fwk.StateKey = "queue-scheduler.io/queue-verdict"
	reclaimRefusalKey fwk.StateKey = "queue-scheduler.io/reclaim-refusal"
	letInKey          fwk.StateKey = "queue-scheduler.io/let-in"
)

// snapshot holds the cycle's snapshot; it is immutable, so a clone is the same value.
type snapshot struct{ *policy.Snapshot }

func (s snapshot) Clone() fwk.StateData { return s }

// Snapshot returns the cycle's snapshot of the queues: the one the first plugin that read it took,
// or else take() taken now and left for the rest of the cycle.
func Snapshot(state fwk.CycleState, take func() *policy.Snapshot) *policy.Snapshot {
	if s, ok := Taken(state); ok {
		return s
	}
	s := take()
	state.Write(snapshotKey, snapshot{s})
	return s
}

// Taken returns the cycle's snapshot if a plugin took one already. A plugin that only needs a
// snapshot's version reads it this way, so that the cycle's is taken by the plugin that must index
// its pod before taking it (Proportion), whatever the order of the profile.
func Taken(state Reader) (*policy.Snapshot, bool) {
	data, err := state.Read(snapshotKey)
	if err != nil {
		return nil, false
	}
	s, ok := data.(snapshot)
	return s.Snapshot, ok
}

// QueueVerdict is what the queue's admission (Proportion's PreFilter) said of the cycle's pod.
type QueueVerdict struct {
	// Refused: the queue turned the pod away; Message says why.
	Refused bool
	Message string
	// Behind: the queue would take the pod, but older pods of it go first; nothing is to be evicted
	// for it.
	Behind bool
}

// Clone returns the verdict itself: it is a value.
func (v QueueVerdict) Clone() fwk.StateData { return v }

// SetQueueVerdict records the queue's verdict on the cycle's pod.
func SetQueueVerdict(state fwk.CycleState, v QueueVerdict) { state.Write(queueVerdictKey, v) }

// QueueVerdictOf returns the queue's verdict on the cycle's pod, if it gave one.
func QueueVerdictOf(state Reader) (QueueVerdict, bool) {
	data, err := state.Read(queueVerdictKey)
	if err != nil {
		return QueueVerdict{}, false
	}
	v, ok := data.(QueueVerdict)
	return v, ok
}

type reclaimRefusal string

func (r reclaimRefusal) Clone() fwk.StateData { return r }

// SetReclaimRefusal records why reclaim could not help the gang of the cycle's pod or pod group.
func SetReclaimRefusal(state Writer, why string) { state.Write(reclaimRefusalKey, reclaimRefusal(why)) }

// ReclaimRefusal returns why reclaim could not help the gang of the cycle's pod or pod group, if it
// said so.
func ReclaimRefusal(state Reader) (string, bool) {
	data, err := state.Read(reclaimRefusalKey)
	if err != nil {
		return "", false
	}
	why, ok := data.(reclaimRefusal)
	return string(why), ok
}

// LetIn is the room the cycle's pod was let in for, ahead of younger pods: Pod left Node, as the
// accounting counted it. The scheduler's cache counts the same leaving from its own handler of the
// event, a moment earlier or later, so the cycle's snapshot may still hold Pod there.
type LetIn struct {
	Node string
	Pod  types.UID
}

// Clone returns the value itself.
func (l LetIn) Clone() fwk.StateData { return l }

// SetLetIn records the room the cycle's pod was let in for.
func SetLetIn(state Writer, l LetIn) { state.Write(letInKey, l) }

// LetInOf returns the room the cycle's pod was let in for, if it was.
func LetInOf(state Reader) (LetIn, bool) {
	data, err := state.Read(letInKey)
	if err != nil {
		return LetIn{}, false
	}
	l, ok := data.(LetIn)
	return l, ok
}

// Shows says whether nodes, a cycle's snapshot, shows the pod uid on node. The queue layer's
// informers can see a pod go before kube-scheduler's cache does: what a cycle's snapshot shows is
// what its plugins' decisions rest on.
func Shows(nodes fwk.NodeInfoLister, node string, uid types.UID) bool {
	info, err := nodes.Get(node)
	if err != nil {
		return false
	}
	for _, p := range info.GetPods() {
		if p.GetPod().UID == uid {
			return true
		}
	}
	return false
}
