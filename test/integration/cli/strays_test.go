package cli

import (
	"context"
	"regexp"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/storage/names"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// waitAdmission waits until the webhook admits (or refuses) a pod of queue in namespace, tried
// with a server dry run: its caches see a change of the queues and namespaces a moment after it.
func waitAdmission(t *testing.T, namespace, queue string, admitted bool) {
	t.Helper()
	pod := util.MakePod(namespace, "probe").Label(schedulingv1beta1.QueueLabel, queue).Obj()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		_, last = cluster.Kube.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return (last == nil) == admitted, nil
	})
	if err != nil {
		t.Fatalf("a pod of queue %s in namespace %s: admitted %v within %s, want %v (last: %v)", queue, namespace, last == nil, settle, admitted, last)
	}
}

// folded folds the padding of a table, so that a row reads with single spaces.
var folded = regexp.MustCompile(`[ \t]+`)

// rowOf is the row of `kubectl queue jobs QUEUE` that begins with prefix, or "".
func rowOf(t *testing.T, queue, prefix string) string {
	t.Helper()
	for _, line := range strings.Split(mustRun(t, "jobs", queue), "\n") {
		if line = folded.ReplaceAllString(line, " "); strings.HasPrefix(line, prefix) {
			return line
		}
	}
	return ""
}

// waitRow waits until a row of `kubectl queue jobs QUEUE` begins with prefix and holds every one
// of words, and returns it.
func waitRow(t *testing.T, queue, prefix string, words ...string) string {
	t.Helper()
	var row string
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(context.Context) (bool, error) {
		row = rowOf(t, queue, prefix)
		for _, w := range words {
			if !strings.Contains(row, w) {
				return false, nil
			}
		}
		return row != "", nil
	})
	if err != nil {
		t.Fatalf("kubectl queue jobs %s: no row %q holding %q within %s; last: %q", queue, prefix, words, settle, row)
	}
	return row
}

// A Job's pods refused by the webhook (their queue went away; their queue no longer takes the
// namespace) and a Job's pods that wait for a PodGroup that does not exist show in `kubectl queue
// jobs`: the first under the queue that takes the namespace, the second under the queue it names,
// in the webhook's words; the third under the queue that takes the namespace, with the pods'
// reason, which the live view's pendingworkloads also lists. The Job controller runs in the test.
func TestJobsShowRefusedAndPodGroupMissingJobs(t *testing.T) {
	util.RunJobController(t, cluster.Kube)
	ctx := context.Background()
	// A namespace of its own each run: no namespace controller deletes one.
	ns := names.SimpleNameGenerator.GenerateName("cli-strays-")
	const team, other, gone = "cli-strays", "cli-other", "cli-gone"
	if _, err := cluster.Kube.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns,
		Labels: map[string]string{"team": ns, "other": "yes"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	removeQueues(t, team, other)
	mustRun(t, "create", team, "--namespaces", "team="+ns)
	mustRun(t, "create", other, "--namespaces", "other=yes")
	mustRun(t, "create", gone, "--namespaces", "team="+ns)
	waitAdmission(t, ns, gone, true)
	waitAdmission(t, ns, other, true)

	// Jobs created while their queues take them (a webhook may judge a Job as its pods), started
	// once their queues no longer do.
	jobOf := func(name string, suspend bool, labels map[string]string) {
		t.Helper()
		j := util.MakeJob(ns, name, 1, suspend)
		j.Spec.Template.Labels = labels
		if _, err := cluster.Kube.BatchV1().Jobs(ns).Create(ctx, j, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create Job %s: %v", name, err)
		}
		t.Cleanup(func() { _ = cluster.Kube.BatchV1().Jobs(ns).Delete(ctx, name, metav1.DeleteOptions{}) })
	}
	jobOf("typo", true, map[string]string{schedulingv1beta1.QueueLabel: gone})
	jobOf("elsewhere", true, map[string]string{schedulingv1beta1.QueueLabel: other})
	jobOf("gang", false, map[string]string{schedulingv1beta1.PodGroupLabel: "cli-trian"})
	mustRun(t, "delete", gone, "--close-first", "--wait=30s", "--direct")
	if _, err := cluster.Kube.CoreV1().Namespaces().Patch(ctx, ns, types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"other":null}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitAdmission(t, ns, gone, false)
	waitAdmission(t, ns, other, false)
	for _, name := range []string{"typo", "elsewhere"} {
		if _, err := cluster.Kube.BatchV1().Jobs(ns).Patch(ctx, name, types.MergePatchType, []byte(`{"spec":{"suspend":false}}`),
			metav1.PatchOptions{}); err != nil {
			t.Fatalf("start Job %s: %v", name, err)
		}
	}

	row := waitRow(t, team, "Job "+ns+" typo Pending 0/1 ", `Not found: "`+gone+`"`)
	waitRow(t, team, "Job "+ns+" gang Pending 0/1 ", `PodGroup "cli-trian" of pod `+ns+`/gang-`)
	waitRow(t, other, "Job "+ns+" elsewhere Pending 0/1 ", `queue "`+other+`" does not accept work from namespace "`+ns+`"`)
	for _, unwanted := range []string{"denied the request", "Error creating"} {
		if strings.Contains(row, unwanted) {
			t.Errorf("the refusal is not in the webhook's words alone: %q", row)
		}
	}
	if row := rowOf(t, team, "Job "+ns+" elsewhere "); row != "" {
		t.Errorf("queue %s lists the Job of queue %s: %q", team, other, row)
	}
	if row := rowOf(t, other, "Job "+ns+" typo "); row != "" {
		t.Errorf("queue %s, which does not take namespace %s, lists its Job of a missing queue: %q", other, ns, row)
	}

	var held []visibilityv1beta1.PendingWorkload
	err := wait.PollUntilContextTimeout(ctx, util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		list, err := cluster.Queues.VisibilityV1beta1().PendingWorkloads(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		held = held[:0]
		for _, w := range list.Items {
			if w.Workload.Kind == visibilityv1beta1.WorkloadPod && strings.HasPrefix(w.Workload.Name, "gang-") {
				held = append(held, w)
			}
		}
		return len(held) == 1 && held[0].Reason == "PodGroupMissing", nil
	})
	if err != nil {
		t.Fatalf("the live view's pending work of %s: %+v, want the Job gang's pod, PodGroupMissing", ns, held)
	}
	if want := `PodGroup "cli-trian" of pod ` + ns + "/" + held[0].Workload.Name + " does not exist"; held[0].Message != want {
		t.Errorf("the live view says the pod waits for %q, want %q", held[0].Message, want)
	}
	if pods, err := cluster.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: batchv1.JobNameLabel + "=typo"}); err != nil || len(pods.Items) > 0 {
		t.Errorf("Job typo has pods %v (err %v), want none: the webhook refuses them", pods, err)
	}
}
