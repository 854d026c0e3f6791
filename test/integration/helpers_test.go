package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// settle bounds every wait for the system to react; it is far below the scheduler's five-minute
// flush of unschedulable pods, so a test that passes did not rely on that flush.
const settle = 30 * time.Second

// newNamespace creates a namespace named after the test and suffix, with annotations, and deletes it
// after the test.
func newNamespace(t *testing.T, suffix string, annotations map[string]string) string {
	t.Helper()
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(name) > 50 {
		name = name[:50]
	}
	name = strings.TrimRight(name, "-")
	if suffix != "" {
		name += "-" + suffix
	}
	ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations}}
	if _, err := cluster.Kube.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = cluster.Kube.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return name
}

// createQueue creates q and deletes it after the test.
func createQueue(t *testing.T, q *schedulingv1beta1.Queue) {
	t.Helper()
	if _, err := cluster.Queues.SchedulingV1beta1().Queues().Create(context.Background(), q, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create queue %s: %v", q.Name, err)
	}
	t.Cleanup(func() {
		_ = cluster.Queues.SchedulingV1beta1().Queues().Delete(context.Background(), q.Name, metav1.DeleteOptions{})
	})
}

// setQueueState patches the queue's spec.state.
func setQueueState(t *testing.T, name string, state schedulingv1beta1.QueueState) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"state":%q}}`, state)
	if _, err := cluster.Queues.SchedulingV1beta1().Queues().Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("set queue %s state %s: %v", name, state, err)
	}
}

// createPods creates count pods named prefix-i from build and returns their names.
func createPods(t *testing.T, namespace, prefix string, count int, build func(name string) *v1.Pod) []string {
	t.Helper()
	names := make([]string, 0, count)
	for i := range count {
		pod := build(fmt.Sprintf("%s-%d", prefix, i))
		pod.Namespace = namespace
		if _, err := cluster.Kube.CoreV1().Pods(namespace).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create pod %s: %v", pod.Name, err)
		}
		names = append(names, pod.Name)
	}
	return names
}

// queuePod builds a one-CPU pod of queue q (no label when q is empty).
func queuePod(namespace, q string) func(string) *v1.Pod {
	return func(name string) *v1.Pod {
		w := util.MakePod(namespace, name).Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"})
		if q != "" {
			w = w.Label(schedulingv1beta1.QueueLabel, q)
		}
		return w.Obj()
	}
}

func waitBound(t *testing.T, namespace string, names []string) {
	t.Helper()
	if err := util.WaitForPods(context.Background(), cluster.Kube, namespace, names, settle, "bound", util.IsBound); err != nil {
		t.Fatal(err)
	}
}

func waitHeld(t *testing.T, namespace string, names []string, message string) {
	t.Helper()
	if err := util.WaitForPods(context.Background(), cluster.Kube, namespace, names, settle, "held with "+message, util.HasUnschedulableMessage(message)); err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if err := util.WaitForEvent(context.Background(), cluster.Kube, namespace, name, "FailedScheduling", message, settle); err != nil {
			t.Fatal(err)
		}
	}
}

func getPod(t *testing.T, namespace, name string) *v1.Pod {
	t.Helper()
	pod, err := cluster.Kube.CoreV1().Pods(namespace).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get pod %s: %v", name, err)
	}
	return pod
}

// withoutAdmission runs create with the queue-scheduler webhooks unregistered, restoring them after.
func withoutAdmission(t *testing.T, create func()) {
	t.Helper()
	util.WithoutAdmission(t, cluster.Kube, cluster.Queues, create)
}
