package queuesim

import (
	"context"
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// deletionTimeout bounds each wait of the deletion tests: the garbage collector's first sync of its
// monitors takes a few seconds, and its workers wait for it at most 30 s.
const deletionTimeout = time.Minute

// testDeletion checks, on the cluster of `queuesim up`, that deleting behaves as on a cluster: the
// garbage collector and the namespace controller run. queue accepts work from every namespace.
func testDeletion(ctx context.Context, t *testing.T, kube kubernetes.Interface, queue string) {
	ns := createNamespace(ctx, t, kube, "deletion")
	// kubectl delete job: background propagation, the Job goes at once and its pods after it.
	t.Run("DeletingAJobDeletesItsPods", func(t *testing.T) {
		job := runJob(ctx, t, kube, ns, "background", queue)
		deleteJob(ctx, t, kube, job, metav1.DeletePropagationBackground)
		waitNoPods(ctx, t, kube, ns, job.Name)
	})
	// kubectl delete job --cascade=foreground: the Job stays, Terminating, until its pods are gone.
	t.Run("ForegroundDeletionRemovesTheJob", func(t *testing.T) {
		job := runJob(ctx, t, kube, ns, "foreground", queue)
		deleteJob(ctx, t, kube, job, metav1.DeletePropagationForeground)
		waitGone(ctx, t, "Job "+ns+"/"+job.Name, func(ctx context.Context) (metav1.Object, error) {
			return kube.BatchV1().Jobs(ns).Get(ctx, job.Name, metav1.GetOptions{})
		})
		waitNoPods(ctx, t, kube, ns, job.Name)
	})
	t.Run("DeletingANamespaceDeletesItsPods", func(t *testing.T) {
		doomed := createNamespace(ctx, t, kube, "doomed")
		job := runJob(ctx, t, kube, doomed, "in-doomed", queue)
		if err := kube.CoreV1().Namespaces().Delete(ctx, doomed, metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete namespace %s: %v", doomed, err)
		}
		waitNoPods(ctx, t, kube, doomed, job.Name)
		waitGone(ctx, t, "namespace "+doomed, func(ctx context.Context) (metav1.Object, error) {
			return kube.CoreV1().Namespaces().Get(ctx, doomed, metav1.GetOptions{})
		})
	})
}

func createNamespace(ctx context.Context, t *testing.T, kube kubernetes.Interface, prefix string) string {
	t.Helper()
	ns, err := kube.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	return ns.Name
}

// runJob creates a Job of two pods in queue and waits until both run on the simulated nodes.
func runJob(ctx context.Context, t *testing.T, kube kubernetes.Interface, ns, name, queue string) *batchv1.Job {
	t.Helper()
	job := util.MakeJob(ns, name, 2, false)
	job.Spec.Template.Labels = map[string]string{schedulingv1beta1.QueueLabel: queue}
	job, err := kube.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create Job %s/%s: %v", ns, name, err)
	}
	var phases []v1.PodPhase
	err = wait.PollUntilContextTimeout(ctx, util.PollInterval, deletionTimeout, true, func(ctx context.Context) (bool, error) {
		pods, err := jobPods(ctx, kube, ns, name)
		if err != nil {
			return false, nil
		}
		phases = phases[:0]
		for _, pod := range pods {
			phases = append(phases, pod.Status.Phase)
		}
		return len(phases) == 2 && phases[0] == v1.PodRunning && phases[1] == v1.PodRunning, nil
	})
	if err != nil {
		t.Fatalf("Job %s/%s: its pods are not both running within %s (phases %v): %v", ns, name, deletionTimeout, phases, err)
	}
	return job
}

func deleteJob(ctx context.Context, t *testing.T, kube kubernetes.Interface, job *batchv1.Job, propagation metav1.DeletionPropagation) {
	t.Helper()
	if err := kube.BatchV1().Jobs(job.Namespace).Delete(ctx, job.Name, metav1.DeleteOptions{PropagationPolicy: &propagation}); err != nil {
		t.Fatalf("delete Job %s/%s (%s): %v", job.Namespace, job.Name, propagation, err)
	}
}

// jobPods lists the pods of the Job named job, by the label the Job controller gives them.
func jobPods(ctx context.Context, kube kubernetes.Interface, ns, job string) ([]v1.Pod, error) {
	pods, err := kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: batchv1.JobNameLabel + "=" + job})
	if err != nil {
		return nil, fmt.Errorf("list the pods of Job %s/%s: %w", ns, job, err)
	}
	return pods.Items, nil
}

// waitNoPods waits until the Job named job has no pod left, Terminating or not.
func waitNoPods(ctx context.Context, t *testing.T, kube kubernetes.Interface, ns, job string) {
	t.Helper()
	var left []string
	err := wait.PollUntilContextTimeout(ctx, util.PollInterval, deletionTimeout, true, func(ctx context.Context) (bool, error) {
		pods, err := jobPods(ctx, kube, ns, job)
		if err != nil {
			return false, nil
		}
		left = left[:0]
		for _, pod := range pods {
			left = append(left, fmt.Sprintf("%s (%s, deleting: %t)", pod.Name, pod.Status.Phase, pod.DeletionTimestamp != nil))
		}
		return len(left) == 0, nil
	})
	if err != nil {
		t.Fatalf("the pods of Job %s/%s are still there after %s: %v: %v", ns, job, deletionTimeout, left, err)
	}
}

// waitGone waits until get reports what as not found.
func waitGone(ctx context.Context, t *testing.T, what string, get func(context.Context) (metav1.Object, error)) {
	t.Helper()
	// state is what's last state read: the last poll's read may fail as the timeout ends.
	var state string
	var readErr error
	err := wait.PollUntilContextTimeout(ctx, util.PollInterval, deletionTimeout, true, func(ctx context.Context) (bool, error) {
		obj, err := get(ctx)
		switch {
		case apierrors.IsNotFound(err):
			return true, nil
		case err != nil:
			readErr = err
		default:
			state = fmt.Sprintf("deletionTimestamp %v, finalizers %v", obj.GetDeletionTimestamp(), obj.GetFinalizers())
		}
		return false, nil
	})
	if err != nil {
		if state == "" {
			state = fmt.Sprintf("never read: %v", readErr)
		}
		t.Fatalf("%s is still there after %s (%s): %v", what, deletionTimeout, state, err)
	}
}
