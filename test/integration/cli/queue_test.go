package cli

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Queues made with create show in list, get, --tree and -o wide, with quantities as Kubernetes
// prints them.
func TestCreateAndList(t *testing.T) {
	removeQueues(t, "team-a", "org", "ml")
	mustRun(t, "create", "team-a", "--all-namespaces", "--weight", "2", "--capability", "cpu=8,memory=16Gi,nvidia.com/gpu=2")
	mustRun(t, "create", "org", "--all-namespaces", "--weight", "3", "--guarantee", "cpu=4")
	expect(t, "create", mustRun(t, "create", "ml", "--all-namespaces", "--parent", "org", "--reclaimable=false", "--state", "suspended"), "queue/ml created")
	waitQueue(t, "ml", "Suspended with a share", func(q *queue) bool {
		return q.Status.State == "Suspended" && q.Status.Deserved != nil
	})

	expect(t, "list", mustRun(t, "list"), `
NAME      STATE       WEIGHT   PARENT   INQUEUE   PENDING   RUNNING   UNKNOWN   COMPLETED
default   Open        1        root     0         0         0         0         0
ml        Suspended   1        org      0         0         0         0         0
org       Open        3        root     0         0         0         0         0
root      Open        1        -        0         0         0         0         0
team-a    Open        2        root     0         0         0         0         0`[1:])
	expect(t, "list --tree", mustRun(t, "ls", "--tree"), `
NAME         STATE       WEIGHT   PARENT   INQUEUE   PENDING   RUNNING   UNKNOWN   COMPLETED
root         Open        1        -        0         0         0         0         0
├─ default   Open        1        root     0         0         0         0         0
├─ org       Open        3        root     0         0         0         0         0
│  └─ ml     Suspended   1        org      0         0         0         0         0
└─ team-a    Open        2        root     0         0         0         0         0`[1:])
	expect(t, "update", mustRun(t, "update", "team-a", "--weight", "4", "--capability", "cpu=16,memory=64Gi", "--priority", "2"), "queue/team-a updated")
	expect(t, "update again", mustRun(t, "update", "team-a", "--weight", "4"), "queue/team-a unchanged")
	expect(t, "update weight back", mustRun(t, "update", "team-a", "--weight", "2"), "queue/team-a updated")
	q, err := cluster.Queues.SchedulingV1beta1().Queues().Get(context.Background(), "team-a", metav1.GetOptions{})
	if err != nil || q.Spec.Priority != 2 || q.Spec.Capability.Memory().String() != "64Gi" || q.Spec.Weight != 2 {
		t.Errorf("after updates: %+v (err %v), want priority 2, 64Gi of memory, weight 2", q.Spec, err)
	}
	expect(t, "get", mustRun(t, "get", "team-a", "org"), `
NAME     STATE   WEIGHT   PARENT   INQUEUE   PENDING   RUNNING   UNKNOWN   COMPLETED
team-a   Open    2        root     0         0         0         0         0
org      Open    3        root     0         0         0         0         0`[1:])
}

// create --namespaces stores the selector; a queue created without one is named in a warning.
func TestCreateWithNamespaceSelector(t *testing.T) {
	removeQueues(t, "picky")
	created := mustRun(t, "create", "picky", "--namespaces", "team in (a,b)")
	expect(t, "create without every namespace", created, "queue/picky created")
	waitQueue(t, "picky", "selecting team in (a,b)", func(q *queue) bool {
		sel := q.Spec.NamespaceSelector
		return sel != nil && len(sel.MatchExpressions) == 1 && sel.MatchExpressions[0].Key == "team" && len(sel.MatchExpressions[0].Values) == 2
	})
	expect(t, "create without a selector", mustRun(t, "create", "lonely", "--dry-run=client"), `queue/lonely created (dry run)
Warning: queue "lonely" accepts no namespace's work until it has a namespace selector: kubectl queue update lonely --namespaces SELECTOR (or --all-namespaces)`)
	removeQueues(t, "lonely")
	// Created for real, the API server warns, and the plugin prints the warning as kubectl does.
	expect(t, "create without a selector on the server", mustRun(t, "create", "lonely"), `Warning: queue "lonely" has no spec.namespaceSelector: it accepts work from no namespace; set namespaceSelector: {} for every namespace, or matchLabels for some (kubectl queue update lonely --namespaces SELECTOR, or --all-namespaces)
queue/lonely created`)
}
