package accounting

import (
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
