package cli

import (
	"encoding/json"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

// -o wide adds what a queue holds and deserves; -o name, json and yaml print as kubectl does.
func TestOutputFormats(t *testing.T) {
	removeQueues(t, "wide")
	mustRun(t, "create", "wide", "--all-namespaces", "--capability", "cpu=8,memory=16Gi")
	pods := createPods(t, "wide", 2, map[v1.ResourceName]string{v1.ResourceCPU: "1500m", v1.ResourceMemory: "1Gi"})
	waitQueue(t, "wide", "holding its pods", func(q *queue) bool {
		return q.Status.Allocated.Cpu().MilliValue() == 3000 && q.Status.Deserved.Cpu().MilliValue() == 3000
	})
	expect(t, "get -o wide", mustRun(t, "get", "wide", "-o", "wide"), `
NAME   STATE   WEIGHT   PARENT   INQUEUE   PENDING   RUNNING   UNKNOWN   COMPLETED   ALLOCATED          DESERVED
wide   Open    1        root     0         0         0         0         0           cpu=3,memory=2Gi   cpu=3,memory=2Gi,pods=0`[1:])
	deletePods(t, pods)

	expect(t, "-o name", mustRun(t, "get", "wide", "root", "-o", "name"), `
queue.scheduling.queue-scheduler.io/wide
queue.scheduling.queue-scheduler.io/root`[1:])
	var q schedulingv1beta1.Queue
	if err := json.Unmarshal([]byte(mustRun(t, "get", "wide", "-o", "json")), &q); err != nil || q.Kind != "Queue" || q.Name != "wide" || q.Spec.Capability.Memory().String() != "16Gi" {
		t.Errorf("-o json: %+v (err %v), want the Queue wide with its 16Gi capability", q, err)
	}
	var list schedulingv1beta1.QueueList
	if err := json.Unmarshal([]byte(mustRun(t, "get", "wide", "root", "-o", "json")), &list); err != nil || len(list.Items) != 2 {
		t.Errorf("-o json of two queues: %d items (err %v), want a list of 2", len(list.Items), err)
	}
	if out := mustRun(t, "get", "wide", "-o", "yaml"); !strings.Contains(out, "kind: Queue\n") || !strings.Contains(out, "    memory: 16Gi\n") {
		t.Errorf("-o yaml printed:\n%s", out)
	}
	if _, err := run(t, "get", "wide", "-o", "xml"); err == nil || !strings.Contains(err.Error(), "-o xml") {
		t.Errorf("-o xml: got %v, want an error naming the format", err)
	}
}
