package visibility

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
)

// kubectl get queuesummaries names the pods it counts as pods: RUNNING and PENDING are the
// PodGroups' counts in kubectl queue list and kubectl get queues. Usage is in resource-hours.
func TestQueueSummaryColumns(t *testing.T) {
	q := visibilityv1beta1.QueueSummary{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}, RunningPods: 25, PendingPods: 15,
		PodGroups: visibilityv1beta1.PodGroupCounts{Running: 2, Pending: 1},
		Usage:     v1.ResourceList{v1.ResourceCPU: resource.MustParse("612k"), v1.ResourceMemory: resource.MustParse("4638564681728")}}
	table, err := queueSummaryTable(&q)
	if err != nil {
		t.Fatal(err)
	}
	cells := map[string]any{}
	for i, c := range table.ColumnDefinitions {
		cells[c.Name] = table.Rows[0].Cells[i]
	}
	for _, tt := range []struct {
		column string
		want   any
	}{
		{column: "Running Pods", want: int32(25)},
		{column: "Pending Pods", want: int32(15)},
		{column: "Running", want: nil},
		{column: "Pending", want: nil},
		{column: "Usage", want: "cpu 170.0 core-h, memory 1.2 GiB-h"},
	} {
		if diff := cmp.Diff(tt.want, cells[tt.column]); diff != "" {
			t.Errorf("column %q (-want,+got):\n%s", tt.column, diff)
		}
	}
}
