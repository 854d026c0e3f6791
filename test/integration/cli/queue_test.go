package cli

import (
	"testing"
)

// Queues made with create show in list, get, --tree and -o wide, with quantities as Kubernetes
// prints them.
func TestCreateAndList(t *testing.T) {
	removeQueues(t, "team-a", "org", "ml")
	mustRun(t, "create", "team-a", "--weight", "2", "--capability", "cpu=8,memory=16Gi,nvidia.com/gpu=2")
	mustRun(t, "create", "org", "--weight", "3", "--guarantee", "cpu=4")
	expect(t, "create", mustRun(t, "create", "ml", "--parent", "org", "--reclaimable=false", "--state", "suspended"), "queue/ml created")
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
	expect(t, "get", mustRun(t, "get", "team-a", "org"), `
NAME     STATE   WEIGHT   PARENT   INQUEUE   PENDING   RUNNING   UNKNOWN   COMPLETED
team-a   Open    2        root     0         0         0         0         0
org      Open    3        root     0         0         0         0         0`[1:])
}
