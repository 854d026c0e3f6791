package integration

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// kubeconfigIn writes a copy of the cluster's kubeconfig whose context works in namespace, as a
// tenant's kubeconfig does.
func kubeconfigIn(t *testing.T, namespace string) string {
	t.Helper()
	config, err := clientcmd.LoadFromFile(cluster.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	config.Contexts[config.CurrentContext].Namespace = namespace
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*config, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// spaces folds the padding of a table, so that a row can be matched whatever its columns' widths.
var spaces = regexp.MustCompile(`[ \t]+`)

// A tenant with the namespace role edit and the shipped queue viewer role runs `kubectl queue jobs`
// and `describe` on its queue: it sees its own namespace's PodGroups, QueueUnits, Jobs and pods,
// nothing of the other tenant's namespace the queue also selects, and no Forbidden; it is refused
// the other namespace when it names it. The administrator sees both.
func TestTenantListsItsQueueWork(t *testing.T) {
	util.RunJobController(t, cluster.Kube)
	const q = "ten-cli"
	team := map[string]string{"team": q}
	mine := newLabelledNamespace(t, "mine", team, nil)
	theirs := newLabelledNamespace(t, "theirs", team, nil)
	createQueue(t, util.MakeQueue(q).Namespaces(team).Capability(map[v1.ResourceName]string{v1.ResourceCPU: "40"}).Obj())
	bind(t, mine, "edit", "tess", authorizationv1.ResourceAttributes{Namespace: mine, Verb: "list", Resource: "pods"})
	bind(t, "", "queue-scheduler-queue-viewer", "tess", authorizationv1.ResourceAttributes{
		Verb: "get", Group: schedulingv1beta1.GroupName, Resource: "queues"})

	ctx := context.Background()
	create := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("create %s: %v", what, err)
		}
	}
	for _, ns := range []string{mine, theirs} {
		_, err := cluster.Queues.SchedulingV1beta1().PodGroups(ns).Create(ctx, util.MakePodGroup(ns, ns+"-gang").Queue(q).MinMember(2).Obj(), metav1.CreateOptions{})
		create("PodGroup", err)
		_, err = cluster.Kube.CoreV1().Pods(ns).Create(ctx, queuePod(ns, q)(ns+"-solo"), metav1.CreateOptions{})
		create("pod", err)
	}
	sweep := util.MakeJob(mine, "sweep", 2, false)
	sweep.Spec.Template.Labels = map[string]string{schedulingv1beta1.QueueLabel: q}
	_, err := cluster.Kube.BatchV1().Jobs(mine).Create(ctx, sweep, metav1.CreateOptions{})
	create("Job", err)
	_, err = cluster.Kube.BatchV1().Jobs(mine).Create(ctx, util.MakeJob(mine, "later", 1, true), metav1.CreateOptions{})
	create("Job", err)
	_, err = cluster.Queues.SchedulingV1beta1().QueueUnits(mine).Create(ctx, util.MakeQueueUnit(mine, "later", q, "later").
		Resource(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj(), metav1.CreateOptions{})
	create("QueueUnit", err)

	kubeconfig := kubeconfigIn(t, mine)
	tenant := []string{"--as", "tess", "--as-group", "system:authenticated"}
	rows := []string{
		"PodGroup " + mine + " " + mine + "-gang Inqueue 0/2", // admitted; its pods are still to come
		"Pod " + mine + " " + mine + "-solo Pending 1/1",      // placed on a node; no kubelet runs here
		"Job " + mine + " sweep Running 2/2",
		"QueueUnit " + mine + " later Dequeued -",
	}
	var out string
	err = wait.PollUntilContextTimeout(ctx, util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		got, err := util.KubectlQueue(ctx, kubeconfig, append(tenant, "jobs", q)...)
		out = spaces.ReplaceAllString(got, " ")
		if err != nil {
			t.Fatalf("the tenant's kubectl queue jobs failed: %v\n%s", err, got)
		}
		for _, row := range rows {
			if !strings.Contains(out, row) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("the tenant's kubectl queue jobs never listed %q:\n%s", rows, out)
	}
	wantLacks(t, "the tenant's jobs", out, theirs, "Job "+mine+" later", "Forbidden")
	if note := `listing namespace "` + mine + `" only`; !strings.Contains(out, note) {
		t.Errorf("the tenant's jobs do not say %q:\n%s", note, out)
	}

	described, err := util.KubectlQueue(ctx, kubeconfig, append(tenant, "describe", q)...)
	if err != nil {
		t.Fatalf("the tenant's kubectl queue describe failed: %v\n%s", err, described)
	}
	described = spaces.ReplaceAllString(described, " ")
	for _, want := range append(rows, "Name: "+q, "Events:\n <not shown: you may not list events in every namespace>") {
		if !strings.Contains(described, want) {
			t.Errorf("the tenant's describe lacks %q:\n%s", want, described)
		}
	}
	wantLacks(t, "the tenant's describe", described, theirs, "Forbidden")

	// A tenant whose context names a namespace it may not read is told to name its own.
	lost, err := util.KubectlQueue(ctx, cluster.Kubeconfig, append(tenant, "jobs", q)...)
	if want := "name a namespace of yours with --namespace"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("the tenant's jobs in a context of another namespace: got %v, want an error saying %q\n%s", err, want, lost)
	}

	refused, err := util.KubectlQueue(ctx, kubeconfig, append(tenant, "jobs", q, "--namespace", theirs)...)
	if err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Errorf("the tenant listed the other namespace's work: %v\n%s", err, refused)
	}

	admin, err := util.KubectlQueue(ctx, cluster.Kubeconfig, "jobs", q)
	if err != nil {
		t.Fatalf("the administrator's kubectl queue jobs failed: %v\n%s", err, admin)
	}
	for _, want := range []string{theirs + "-gang", theirs + "-solo", mine + "-solo", "sweep"} {
		if !strings.Contains(admin, want) {
			t.Errorf("the administrator's jobs lack %q:\n%s", want, admin)
		}
	}
	wantLacks(t, "the administrator's jobs", admin, "note:")
}

func wantLacks(t *testing.T, what, text string, unwanted ...string) {
	t.Helper()
	for _, u := range unwanted {
		if strings.Contains(text, u) {
			t.Errorf("%s show %q:\n%s", what, u, text)
		}
	}
}
