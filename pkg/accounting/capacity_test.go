package accounting

import (
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/tools/cache"

	"github.com/queue-scheduler/queue-scheduler/test/util"
)

func TestClusterCapacityFollowsNodes(t *testing.T) {
	changes := 0
	c := newClusterCapacity(func() { changes++ })
	a, b := util.MakeNode("a", "4", "8Gi"), util.MakeNode("b", "6", "8Gi")
	c.set(a)
	c.set(b)
	wantCPU(t, c, "10", "two Ready nodes")

	heartbeat := b.DeepCopy()
	heartbeat.Status.Conditions[0].Message = "kubelet is posting ready status"
	before := changes
	c.set(heartbeat)
	if changes != before {
		t.Error("a status update that leaves the allocatable alone asked for new shares")
	}

	cordoned := a.DeepCopy()
	cordoned.Spec.Unschedulable = true
	c.set(cordoned)
	wantCPU(t, c, "6", "a cordoned")

	notReady := b.DeepCopy()
	notReady.Status.Conditions[0].Status = v1.ConditionFalse
	c.set(notReady)
	wantCPU(t, c, "0", "a cordoned and b not Ready")

	c.set(a)
	c.set(b)
	c.remove(cache.DeletedFinalStateUnknown{Key: "a", Obj: a})
	wantCPU(t, c, "6", "a deleted")
	if changes != 7 {
		t.Errorf("%d changes told, want 7 (one per change of the total)", changes)
	}
}

func wantCPU(t *testing.T, c *clusterCapacity, want, when string) {
	t.Helper()
	got := c.get()[v1.ResourceCPU]
	if got.Cmp(resource.MustParse(want)) != 0 {
		t.Errorf("%s: capacity %s CPU, want %s", when, got.String(), want)
	}
}

// TestNodesShareTheirAllocatable: nodes offering the same allocatable hold one copy of it, counted
// by the nodes on it and forgotten with the last of them.
func TestNodesShareTheirAllocatable(t *testing.T) {
	c := newClusterCapacity(func() {})
	a, b, big := util.MakeNode("a", "4", "8Gi"), util.MakeNode("b", "4", "8Gi"), util.MakeNode("big", "64", "256Gi")
	for _, n := range []*v1.Node{a, b, big} {
		c.set(n)
	}
	if len(c.shapes) != 2 {
		t.Fatalf("%d copies for two kinds of node, want 2", len(c.shapes))
	}
	if reflect.ValueOf(c.byNode["a"]).Pointer() != reflect.ValueOf(c.byNode["b"]).Pointer() {
		t.Error("nodes a and b, alike, hold copies of their own")
	}
	if reflect.ValueOf(c.byNode["a"]).Pointer() == reflect.ValueOf(a.Status.Allocatable).Pointer() {
		t.Error("the shared copy is the informer's object's own list")
	}
	c.remove(a)
	c.remove(big)
	if len(c.shapes) != 1 || c.shapes[shapeKey(b.Status.Allocatable)].holders != 1 {
		t.Errorf("after a and big left: copies %v, want only b's, held once", c.shapes)
	}
	wantCPU(t, c, "4", "b alone")
	c.remove(b)
	if len(c.shapes) != 0 {
		t.Errorf("copies kept after every node left: %v", c.shapes)
	}
}
