package gang

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	schedcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// Room the informers saw freed is unseen by a snapshot that still holds the pod gone, or lacks the
// node added, until a snapshot shows it or freedWindow passes; what a snapshot showed is forgotten.
func TestFreedRoomUnseenBySnapshot(t *testing.T) {
	fake := clocktesting.NewFakeClock(time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC))
	n1, n2 := util.MakeNode("n1", "4", "8Gi"), util.MakeNode("n2", "4", "8Gi")
	gone := member("other", "gone", 0, "n1")
	before := schedcache.NewSnapshot([]*v1.Pod{gone}, []*v1.Node{n1})
	after := schedcache.NewSnapshot(nil, []*v1.Node{n1})

	f := newFreedRoom(fake)
	if f.unseenBy(before) {
		t.Fatal("nothing freed, yet the snapshot lacks something")
	}
	f.podGone(gone)
	if !f.unseenBy(before) {
		t.Error("a snapshot holding the pod gone: want the freeing unseen")
	}
	if f.unseenBy(after) || len(f.pods) != 0 {
		t.Errorf("a snapshot without the pod: want the freeing seen and forgotten, %d kept", len(f.pods))
	}

	f.nodeAdded(n2)
	if !f.unseenBy(after) {
		t.Error("a snapshot without the node added: want it unseen")
	}
	if f.unseenBy(schedcache.NewSnapshot(nil, []*v1.Node{n1, n2})) {
		t.Error("a snapshot with the node added: want it seen")
	}

	f.podGone(gone)
	fake.Step(freedWindow + time.Second)
	if f.unseenBy(before) || len(f.pods) != 0 {
		t.Errorf("a freeing older than the window: want it forgotten, %d kept", len(f.pods))
	}
}
