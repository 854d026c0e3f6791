package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"sigs.k8s.io/yaml"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// A tenant asks what raising its queue's weight would do: the share the answer reports is the one
// the queue then deserves once the weight is really raised, and the tenant's own new job is answered
// in the same reply. The tenant may ask about its own namespace only.
func TestWhatIfReportsTheShareARealChangeThenGives(t *testing.T) {
	admin := waitViewServed(t)
	own, other := newNamespace(t, "own", nil), newNamespace(t, "other", nil)
	// Not reclaimable, and their pods fit no node: the demand stays as it is whatever the shares.
	createQueue(t, util.MakeQueue("whatif-a").Reclaimable(false).Obj())
	createQueue(t, util.MakeQueue("whatif-b").Reclaimable(false).Obj())
	nowhere := func(queue string) func(string) *v1.Pod {
		return func(name string) *v1.Pod {
			return util.MakePod("", name).Label(schedulingv1beta1.QueueLabel, queue).NodeSelector(map[string]string{"whatif": "nowhere"}).
				Req(map[v1.ResourceName]string{v1.ResourceCPU: "60"}).Obj()
		}
	}
	createPods(t, own, "a", 3, nowhere("whatif-a"))
	createPods(t, other, "b", 3, nowhere("whatif-b"))
	for _, q := range []string{"whatif-a", "whatif-b"} {
		wantSummary(t, admin, q, "asking for its pods", func(s *visibilityv1beta1.QueueSummary) bool {
			return cpu(s.Requested) == 180000 && cpu(s.Deserved) > 0
		})
	}

	_, tenant := as(t, "whatif-tenant")
	bind(t, own, "view", "whatif-tenant", authorizationv1.ResourceAttributes{Namespace: own, Verb: "create",
		Group: visibilityv1beta1.GroupName, Resource: visibilityv1beta1.WhatIfs})
	change := filepath.Join(t.TempDir(), "change.yaml")
	manifest := fmt.Sprintf(`apiVersion: scheduling.queue-scheduler.io/v1beta1
kind: Queue
metadata: {name: whatif-a}
spec: {weight: 3}
---
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: %s}
spec:
  parallelism: 2
  template:
    metadata: {labels: {scheduling.queue-scheduler.io/queue: whatif-a}}
    spec:
      restartPolicy: Never
      containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
`, own)
	if err := os.WriteFile(change, []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := kubectlQueueAs(t, "whatif-tenant", "what-if", "-f", change, "--namespace", own, "-o", "yaml")
	if err != nil {
		t.Fatalf("the tenant's what-if: %v\n%s", err, out)
	}
	answer := whatIfAnswer(t, out)
	a, b := shareChange(t, answer, "whatif-a"), shareChange(t, answer, "whatif-b")
	if cpu(a.DeservedIf) <= cpu(a.Deserved) || cpu(b.DeservedIf) >= cpu(b.Deserved) {
		t.Fatalf("weight 3 for whatif-a: a %v -> %v, b %v -> %v; want a's share up and b's down", cpu(a.Deserved), cpu(a.DeservedIf),
			cpu(b.Deserved), cpu(b.DeservedIf))
	}
	wantWorkloads(t, answer, own)

	_, err = tenant.VisibilityV1beta1().WhatIfs(other).Create(context.Background(), &visibilityv1beta1.WhatIf{}, metav1.CreateOptions{})
	wantForbidden(t, "a what-if about another namespace", err)
	if out, err := kubectlQueueAs(t, "whatif-tenant", "what-if", "-f", change, "--namespace", other); err == nil {
		t.Errorf("the tenant's what-if about another namespace was answered:\n%s", out)
	}

	// The real change, the weight and the job: each queue comes to deserve what the what-if said.
	if _, err := cluster.Queues.SchedulingV1beta1().Queues().Patch(context.Background(), "whatif-a", types.MergePatchType,
		[]byte(`{"spec":{"weight":3}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	// The job's two pods, as its controller would create them.
	createPods(t, own, "train", 2, func(name string) *v1.Pod {
		return util.MakePod("", name).Label(schedulingv1beta1.QueueLabel, "whatif-a").Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()
	})
	for _, want := range []visibilityv1beta1.QueueShareChange{a, b} {
		wantSummary(t, admin, want.Name, "after the weight change and the job", func(s *visibilityv1beta1.QueueSummary) bool {
			return quota.Equals(s.Deserved, want.DeservedIf)
		})
	}
}

// whatIfAnswer reads the answer kubectl queue what-if -o yaml printed.
func whatIfAnswer(t *testing.T, out string) *visibilityv1beta1.WhatIf {
	t.Helper()
	answer := &visibilityv1beta1.WhatIf{}
	if err := yaml.Unmarshal([]byte(out), answer); err != nil {
		t.Fatalf("the what-if's answer: %v\n%s", err, out)
	}
	return answer
}

func shareChange(t *testing.T, answer *visibilityv1beta1.WhatIf, queue string) visibilityv1beta1.QueueShareChange {
	t.Helper()
	for _, q := range answer.Status.Queues {
		if q.Name == queue {
			return q
		}
	}
	t.Fatalf("the answer holds no queue %s: %+v", queue, answer.Status.Queues)
	return visibilityv1beta1.QueueShareChange{}
}

// wantWorkloads checks that the answer lists the namespace's three pending pods, which start neither
// now nor then (they fit no node), and the new Job, which starts with the change.
func wantWorkloads(t *testing.T, answer *visibilityv1beta1.WhatIf, namespace string) {
	t.Helper()
	var pods []string
	var job *visibilityv1beta1.WorkloadStartChange
	for i, w := range answer.Status.Workloads {
		switch w.Workload.Kind {
		case visibilityv1beta1.WorkloadPod:
			pods = append(pods, w.Workload.Name)
			if w.Start == nil || w.Start.P50 != nil || w.StartIf == nil || w.StartIf.P50 != nil {
				t.Errorf("pod %s: start %+v, with the change %+v; want a forecast of no start", w.Workload.Name, w.Start, w.StartIf)
			}
		case visibilityv1beta1.WorkloadNew:
			job = &answer.Status.Workloads[i]
		}
	}
	if strings.Join(pods, ",") != "a-0,a-1,a-2" {
		t.Errorf("the answer's pending pods of %s: %v; want a-0,a-1,a-2", namespace, pods)
	}
	if job == nil || job.Workload.Name != "train" || job.Queue != "whatif-a" || job.Refused != "" || job.StartIf == nil || job.StartIf.P50 == nil {
		t.Errorf("the new job in the answer: %+v; want train in whatif-a, with a start", job)
	}
}
