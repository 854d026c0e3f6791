package cli

import (
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// suspend, resume and open return once the status shows the state; close --wait times out with
// what still runs, and returns once the work is gone; delete then deletes.
func TestStateChangesWait(t *testing.T) {
	mustRun(t, "create", "ops", "--all-namespaces")
	waitQueue(t, "ops", "Open", func(q *queue) bool { return q.Status.State == "Open" })

	expect(t, "suspend --wait", mustRun(t, "suspend", "ops", "--wait", "--reason", "Maintenance"), `
command/suspend-ops-xxxxx created: SuspendQueue ops
queue/ops is Suspended`[1:])
	expect(t, "suspend again", mustRun(t, "suspend", "ops"), "queue/ops is already Suspended")
	expect(t, "resume --wait", mustRun(t, "resume", "ops", "--wait=30s"), `
command/resume-ops-xxxxx created: ResumeQueue ops
queue/ops is Open`[1:])
	expect(t, "suspend --direct", mustRun(t, "suspend", "ops", "--direct", "--wait"), `
queue/ops spec.state set to Suspended
queue/ops is Suspended`[1:])
	expect(t, "open --direct", mustRun(t, "open", "ops", "--direct", "--wait"), `
queue/ops spec.state set to Open
queue/ops is Open`[1:])

	pods := createPods(t, "ops", 1, map[v1.ResourceName]string{v1.ResourceCPU: "1"})
	expect(t, "close", mustRun(t, "close", "ops"), `
command/close-ops-xxxxx created: CloseQueue ops`[1:])
	// The wait below starts once the status says Closing, so that it times out on the running pod
	// whatever the controller's pace.
	waitQueue(t, "ops", "Closing", func(q *queue) bool { return q.Status.State == "Closing" })
	out, err := run(t, "close", "ops", "--wait=2s")
	want := `timed out after 2s waiting for queue "ops" to be Closed: it is Closing (closing: no new work is accepted; waiting for 1 live pods`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("close --wait with a running pod: got %v, want an error containing %q", err, want)
	}
	if !strings.Contains(out, "queue/ops is Closing: closing: no new work is accepted; waiting for 1 live pods") {
		t.Errorf("close --wait printed no progress:\n%s", out)
	}
	deletePods(t, pods)
	// The status may still count the pod for a moment: a progress line may come between these two.
	closed := strings.Split(strings.TrimSpace(mustRun(t, "close", "ops", "--wait")), "\n")
	if closed[0] != "queue/ops is already Closed" || closed[len(closed)-1] != "queue/ops is Closed" {
		t.Errorf("close --wait printed %q, want it to begin with the queue already Closed and end with it Closed", closed)
	}
	expect(t, "delete", mustRun(t, "delete", "ops"), "queue/ops deleted")
	err = wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		_, err := cluster.Queues.SchedulingV1beta1().Queues().Get(ctx, "ops", metav1.GetOptions{})
		return err != nil, nil
	})
	if err != nil {
		t.Error("queue ops still exists after delete")
	}
}

// delete --close-first --wait closes an Open queue, waits for it, and deletes it.
func TestDeleteCloseFirst(t *testing.T) {
	mustRun(t, "create", "short-lived", "--all-namespaces")
	expect(t, "delete --close-first", mustRun(t, "delete", "short-lived", "--close-first", "--wait"), `
command/close-short-lived-xxxxx created: CloseQueue short-lived
queue/short-lived is Closed
queue/short-lived deleted`[1:])
}

// A wait that cannot succeed times out with the state it saw: a child cannot be opened while its
// parent is Closed, so the controller refuses the Command and the child stays Closed.
func TestWaitTimesOut(t *testing.T) {
	removeQueues(t, "stuck-parent", "stuck")
	mustRun(t, "create", "stuck-parent", "--all-namespaces", "--state", "Closed")
	mustRun(t, "create", "stuck", "--all-namespaces", "--parent", "stuck-parent", "--state", "Closed")
	waitQueue(t, "stuck", "Closed", func(q *queue) bool { return q.Status.State == "Closed" })
	_, err := run(t, "open", "stuck", "--wait=1s")
	if err == nil || !strings.Contains(err.Error(), `timed out after 1s waiting for queue "stuck" to be Open: it is Closed`) {
		t.Errorf("open --wait=1s under a Closed parent: got %v, want a time-out naming the state reached", err)
	}
}
