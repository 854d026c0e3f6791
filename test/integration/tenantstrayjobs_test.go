package integration

import (
	"context"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/readmodel"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// A tenant with the namespace role edit and the shipped queue viewer role sees, under her team's
// queue, her Job whose pods the webhook refuses for a queue that does not exist, in the webhook's
// words: the events of her namespace are hers to read. The Job was created while the webhook was
// away (a Job's own admission lets Jobs through then); its pods come once it is back.
func TestTenantSeesHerRefusedJob(t *testing.T) {
	util.RunJobController(t, cluster.Kube)
	const q, typo = "ten-typo", "ten-typo-x"
	team := map[string]string{"team": q}
	mine := newLabelledNamespace(t, "typo", team, nil)
	createQueue(t, util.MakeQueue(q).Namespaces(team).Obj())
	bind(t, mine, "edit", "tara", authorizationv1.ResourceAttributes{Namespace: mine, Verb: "list", Resource: "events"})
	bind(t, "", "queue-scheduler-queue-viewer", "tara", authorizationv1.ResourceAttributes{
		Verb: "get", Group: schedulingv1beta1.GroupName, Resource: "queues"})

	ctx := context.Background()
	job := util.MakeJob(mine, "typo", 1, true)
	job.Spec.Template.Labels = map[string]string{schedulingv1beta1.QueueLabel: typo}
	withoutAdmission(t, func() {
		if _, err := cluster.Kube.BatchV1().Jobs(mine).Create(ctx, job, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create Job: %v", err)
		}
	})
	probe := util.MakePod(mine, "probe").Label(schedulingv1beta1.QueueLabel, typo).Obj()
	if err := wait.PollUntilContextTimeout(ctx, util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		_, err := cluster.Kube.CoreV1().Pods(mine).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil, nil
	}); err != nil {
		t.Fatalf("the webhook still admits pods of the missing queue %s after %s", typo, settle)
	}
	if _, err := cluster.Kube.BatchV1().Jobs(mine).Patch(ctx, job.Name, types.MergePatchType, []byte(`{"spec":{"suspend":false}}`),
		metav1.PatchOptions{}); err != nil {
		t.Fatalf("start Job: %v", err)
	}

	kubeconfig := kubeconfigIn(t, mine)
	tenant := []string{"--as", "tara", "--as-group", "system:authenticated"}
	prefix := "Job " + mine + " typo Pending 0/1 "
	var out, row string
	err := wait.PollUntilContextTimeout(ctx, util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		got, err := util.KubectlQueue(ctx, kubeconfig, append(tenant, "jobs", q)...)
		if err != nil {
			t.Fatalf("the tenant's kubectl queue jobs failed: %v\n%s", err, got)
		}
		out = spaces.ReplaceAllString(got, " ")
		row = ""
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, prefix) {
				row = line
			}
		}
		return strings.Contains(row, `Not found: "`+typo+`"`), nil
	})
	if err != nil {
		t.Fatalf("the tenant's kubectl queue jobs %s never listed her Job with the refusal:\n%s", q, out)
	}
	wantLacks(t, "the tenant's jobs", out, "may not list the events", "denied the request", "Error creating")

	// The live view lists the Job too, judged by the webhook's rule on the scheduler's caches, and eta
	// says it never starts as it stands.
	var items []visibilityv1beta1.PendingWorkload
	if err := wait.PollUntilContextTimeout(ctx, util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		list, err := cluster.Queues.VisibilityV1beta1().PendingWorkloads(mine).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		items = list.Items
		return len(items) == 1 && items[0].Workload.Kind == visibilityv1beta1.WorkloadJob && items[0].Workload.Name == "typo" &&
			items[0].Reason == readmodel.ReasonPodsRefused && strings.Contains(items[0].Message, `Not found: "`+typo+`"`) &&
			items[0].Queue == typo, nil
	}); err != nil {
		t.Fatalf("pendingworkloads of %s never listed the refused Job: %+v", mine, items)
	}
	if got, err := util.KubectlQueue(ctx, cluster.Kubeconfig, "eta", "job/typo", "-n", mine); err != nil || !strings.Contains(got, "never") {
		t.Errorf("kubectl queue eta job/typo: %v\n%s\nwant never", err, got)
	}
}
