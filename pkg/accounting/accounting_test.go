package accounting

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// TestCachesHoldNoManagedFields: the queue-scheduler objects are cached without their managed
// fields; a tombstone passes the transform untouched.
func TestCachesHoldNoManagedFields(t *testing.T) {
	withFields := func(name string) *metav1.ObjectMeta {
		return &metav1.ObjectMeta{Name: name, ManagedFields: []metav1.ManagedFieldsEntry{
			{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply, FieldsType: "FieldsV1",
				FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:weight":{}}}`)},
		}}
	}
	root, team := util.MakeQueue("root").Obj(), util.MakeQueue("team").Obj()
	root.ObjectMeta, team.ObjectMeta = *withFields("root"), *withFields("team")
	a := newTestAccounting(t, []runtime.Object{root, team})
	for _, name := range []string{"root", "team"} {
		q, err := a.Store.Queues().Get(name)
		if err != nil {
			t.Fatalf("queue %s not cached: %v", name, err)
		}
		if len(q.ManagedFields) != 0 {
			t.Errorf("queue %s cached with its managed fields %v", name, q.ManagedFields)
		}
	}
	tombstone := cache.DeletedFinalStateUnknown{Key: "team", Obj: team}
	if got, err := WithoutManagedFields(tombstone); err != nil || got != tombstone {
		t.Errorf("tombstone through the transform: %v, %v; want it unchanged", got, err)
	}
}
