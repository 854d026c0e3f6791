package visibility

import (
	"fmt"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"

	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/textout"
)

// The columns kubectl get prints.
var (
	queueSummaryColumns = []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name"},
		{Name: "State", Type: "string"},
		{Name: "Parent", Type: "string"},
		{Name: "Weight", Type: "integer"},
		{Name: "Share", Type: "string", Description: "dominant share of what the queue deserves"},
		{Name: "Allocated", Type: "string"},
		{Name: "Deserved", Type: "string"},
		// The Queue's own columns and kubectl queue list count PodGroups under Running and Pending.
		{Name: "Running Pods", Type: "integer", Description: "live pods bound to a node"},
		{Name: "Pending Pods", Type: "integer", Description: "live pods not bound yet"},
		{Name: "Age", Type: "string"},
		{Name: "Usage", Type: "string", Priority: 1, Description: "decayed usage, in resource-hours: core-hours, GiB-hours…"},
		{Name: "Effective Weight", Type: "string", Priority: 1, Description: "the weight usage gives the queue, where it is not its own"},
	}
	pendingWorkloadColumns = []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name"},
		{Name: "Queue", Type: "string"},
		{Name: "Position", Type: "integer", Description: "place in the queue's order: 1 is next"},
		{Name: "Priority", Type: "integer"},
		{Name: "Pods", Type: "integer"},
		{Name: "Requests", Type: "string"},
		{Name: "Reason", Type: "string"},
		{Name: "Age", Type: "string"},
		{Name: "Message", Type: "string", Priority: 1},
	}
)

func queueSummaryTable(obj runtime.Object) (*metav1.Table, error) {
	table := &metav1.Table{ColumnDefinitions: queueSummaryColumns}
	var items []visibilityv1beta1.QueueSummary
	switch o := obj.(type) {
	case *visibilityv1beta1.QueueSummary:
		items = []visibilityv1beta1.QueueSummary{*o}
	case *visibilityv1beta1.QueueSummaryList:
		items = o.Items
	default:
		return nil, fmt.Errorf("no table for %T", obj)
	}
	for i := range items {
		q := &items[i]
		table.Rows = append(table.Rows, metav1.TableRow{Object: runtime.RawExtension{Object: q}, Cells: []any{
			q.Name, string(q.State), q.Parent, q.Weight, q.Share, resources(q.Allocated), resources(q.Deserved),
			q.RunningPods, q.PendingPods, age(q.CreationTimestamp), usage(q.Usage), resources(q.EffectiveWeight)}})
	}
	return table, listMeta(obj, table)
}

func pendingWorkloadTable(obj runtime.Object) (*metav1.Table, error) {
	table := &metav1.Table{ColumnDefinitions: pendingWorkloadColumns}
	var items []visibilityv1beta1.PendingWorkload
	switch o := obj.(type) {
	case *visibilityv1beta1.PendingWorkload:
		items = []visibilityv1beta1.PendingWorkload{*o}
	case *visibilityv1beta1.PendingWorkloadList:
		items = o.Items
	default:
		return nil, fmt.Errorf("no table for %T", obj)
	}
	for i := range items {
		w := &items[i]
		table.Rows = append(table.Rows, metav1.TableRow{Object: runtime.RawExtension{Object: w}, Cells: []any{
			w.Name, w.Queue, w.PositionInQueue, w.Priority, w.Pods, resources(w.Requests), w.Reason,
			age(w.CreationTimestamp), w.Message}})
	}
	return table, listMeta(obj, table)
}

// listMeta carries a list's resource version and continue token into its table.
func listMeta(obj runtime.Object, table *metav1.Table) error {
	if !meta.IsListType(obj) {
		return nil
	}
	list, err := meta.ListAccessor(obj)
	if err != nil {
		return err
	}
	table.ResourceVersion, table.Continue = list.GetResourceVersion(), list.GetContinue()
	return nil
}

// resources writes a resource list as "cpu=4,memory=8Gi", by name.
func resources(list v1.ResourceList) string {
	parts := make([]string, 0, len(list))
	for _, name := range slices.Sorted(func(yield func(v1.ResourceName) bool) {
		for n := range list {
			if !yield(n) {
				return
			}
		}
	}) {
		q := list[name]
		parts = append(parts, string(name)+"="+q.String())
	}
	return strings.Join(parts, ",")
}

// usage writes decayed usage in resource-hours ("cpu 170.0 core-h, memory 1.2 TiB-h"); "" for none,
// as the other lists are written.
func usage(list v1.ResourceList) string {
	if len(list) == 0 {
		return ""
	}
	return textout.ResourceHours(list)
}

func age(t metav1.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(time.Since(t.Time))
}
