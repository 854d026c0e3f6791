package controller

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// The controller's own usage writes do not sync the queue again (that would write again at once,
// past the pacing); every other change of a queue does.
func TestOnlyUsageUpdatesAreNotSyncedAgain(t *testing.T) {
	base := util.MakeQueue("q").Obj()
	base.Generation = 1
	base.Status.State = schedulingv1beta1.QueueStateOpen
	tests := []struct {
		name      string
		change    func(q *schedulingv1beta1.Queue)
		usageOnly bool
	}{
		{"allocated", func(q *schedulingv1beta1.Queue) {
			q.Status.Allocated = v1.ResourceList{v1.ResourceCPU: resource.MustParse("3")}
		}, true},
		{"counts", func(q *schedulingv1beta1.Queue) { q.Status.Running = 4 }, true},
		{"spec", func(q *schedulingv1beta1.Queue) { q.Generation = 2 }, false},
		{"state", func(q *schedulingv1beta1.Queue) { q.Status.State = schedulingv1beta1.QueueStateClosing }, false},
		{"condition", func(q *schedulingv1beta1.Queue) {
			q.Status.Conditions = []metav1.Condition{{Type: QueueActive, Status: metav1.ConditionFalse, Reason: "Closing"}}
		}, false},
		{"labels", func(q *schedulingv1beta1.Queue) { q.Labels = map[string]string{"team": "a"} }, false},
		{"annotations", func(q *schedulingv1beta1.Queue) { q.Annotations = map[string]string{"note": "x"} }, false},
		{"finalizers", func(q *schedulingv1beta1.Queue) { q.Finalizers = []string{"f"} }, false},
		{"deletion", func(q *schedulingv1beta1.Queue) { now := metav1.Now(); q.DeletionTimestamp = &now }, false},
	}
	for _, tt := range tests {
		q := base.DeepCopy()
		tt.change(q)
		if got := usageOnly(base, q); got != tt.usageOnly {
			t.Errorf("%s: usageOnly = %v, want %v", tt.name, got, tt.usageOnly)
		}
	}
	if usageOnly(base, "not a queue") {
		t.Error("an object that is not a Queue counts as a usage-only update")
	}
}
