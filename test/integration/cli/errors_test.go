package cli

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// Every bad input fails with a message naming the problem, and changes nothing.
func TestBadInput(t *testing.T) {
	removeQueues(t, "steady", "shut")
	mustRun(t, "create", "steady", "--all-namespaces", "--weight", "2")
	mustRun(t, "create", "shut", "--all-namespaces", "--state", "Closed")
	waitQueue(t, "shut", "Closed", func(q *queue) bool { return q.Status.State == "Closed" })
	before := snapshot(t)

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"get", "nope"}, `queue "nope" not found`},
		{[]string{"describe", "nope"}, `queue "nope" not found`},
		{[]string{"update", "nope", "--weight", "2"}, `queue "nope" not found`},
		{[]string{"suspend", "nope"}, `queue "nope" not found`},
		{[]string{"create", "fresh", "--capability", "cpu=eight"}, `--capability "cpu=eight": "eight" is not a quantity for cpu`},
		{[]string{"create", "fresh", "--guarantee", "cpu"}, `--guarantee "cpu": "cpu" is not name=quantity`},
		{[]string{"create", "fresh", "--capability", "cpu=-1"}, `--capability "cpu=-1": cpu must not be negative`},
		{[]string{"create", "fresh", "--weight", "0"}, `--weight must be at least 1, got 0`},
		{[]string{"create", "fresh", "--state", "Paused"}, `--state must be Open, Closed or Suspended, got "Paused"`},
		{[]string{"create", "fresh", "--parent", "nope"}, `parent`},
		{[]string{"create", "steady"}, `creating queue "steady"`},
		{[]string{"update", "steady", "--weight", "0"}, `--weight must be at least 1, got 0`},
		{[]string{"update", "steady"}, `nothing to update`},
		{[]string{"delete", "steady"}, `queue "steady" is Open: only a Closed queue can be deleted, so that no work is stranded; close it first (kubectl queue close steady --wait)`},
		{[]string{"delete", "steady", "--close-first"}, `--close-first needs --wait`},
		{[]string{"suspend", "shut"}, `queue "shut" is Closed: a closed queue cannot be suspended; open it first (kubectl queue open shut)`},
		{[]string{"resume", "steady"}, `queue "steady" is Open, not Suspended: there is nothing to resume`},
		{[]string{"create", "fresh", "--dry-run=maybe"}, `--dry-run must be "none", "client" or "server", got "maybe"`},
		{[]string{"create", "fresh", "--namespaces", "team in a"}, `--namespaces "team in a" is not a label selector`},
		{[]string{"create", "fresh", "--namespaces", "team=a", "--all-namespaces"}, `[all-namespaces namespaces] were all set`},
		{[]string{"operate", "-n", "steady", "-a", "pause"}, `-a must be open, close, suspend, resume or update, got "pause"`},
		{[]string{"operate", "-n", "steady", "-a", "update"}, `-a update needs -w WEIGHT`},
		{[]string{"operate", "-a", "open"}, `-n NAME is required`},
		{[]string{"get"}, `requires at least 1 arg`},
	} {
		out, err := run(t, tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("kubectl queue %s: got %v (printed %q), want an error containing %q", strings.Join(tt.args, " "), err, out, tt.want)
		}
	}
	if after := snapshot(t); !before.Equal(after) {
		t.Errorf("bad input changed the queues: before %v, after %v", sets.List(before), sets.List(after))
	}
	if _, err := cluster.Queues.SchedulingV1beta1().Queues().Get(context.Background(), "fresh", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("queue fresh exists after refused creations (err %v)", err)
	}
}

// snapshot is every queue's name, spec generation and requested state.
func snapshot(t *testing.T) sets.Set[string] {
	t.Helper()
	list, err := cluster.Queues.SchedulingV1beta1().Queues().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := sets.New[string]()
	for _, q := range list.Items {
		out.Insert(q.Name + "/" + string(q.Spec.State) + "/" + itoa(q.Generation))
	}
	return out
}
