package gangsources

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// poll waits up to settle for ok, failing with what and the last state describe gives.
func poll(t *testing.T, what string, ok func(context.Context) (bool, error), describe func() string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, ok)
	if err != nil {
		t.Fatalf("never %s (%v): %s", what, err, describe())
	}
}

func createQueue(t *testing.T, q *schedulingv1beta1.Queue) {
	t.Helper()
	api := cluster.Queues.SchedulingV1beta1().Queues()
	if _, err := api.Create(context.Background(), q, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create queue %s: %v", q.Name, err)
	}
	poll(t, "queue "+q.Name+" has a status", func(ctx context.Context) (bool, error) {
		got, err := api.Get(ctx, q.Name, metav1.GetOptions{})
		return err == nil && got.Status.State != "", nil
	}, func() string { return "" })
}

func createPod(t *testing.T, pod *v1.Pod) {
	t.Helper()
	if _, err := cluster.Kube.CoreV1().Pods(pod.Namespace).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod %s: %v", pod.Name, err)
	}
}

func listPods(t *testing.T, namespace string) []v1.Pod {
	t.Helper()
	list, err := cluster.Kube.CoreV1().Pods(namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// bound counts the bound pods of each PodGroup, by the pod-group label admission gave them.
func bound(t *testing.T, namespace string) map[string]int {
	t.Helper()
	return util.BoundPerPodGroup(listPods(t, namespace))
}

// waiting describes the namespace's pods that are not bound, with why.
func waiting(t *testing.T, namespace string) string {
	var out []string
	for _, p := range listPods(t, namespace) {
		if c := util.PodScheduledCondition(&p); p.Spec.NodeName == "" && c != nil {
			out = append(out, fmt.Sprintf("%s: %s %s", p.Name, c.Reason, c.Message))
		}
	}
	return strings.Join(out, "; ")
}

func waitBound(t *testing.T, namespace string, ok func(map[string]int) bool, what string) {
	t.Helper()
	waitCounted(t, namespace, bound, ok, what)
}

// waitCounted waits until ok holds for the namespace's bound pods as count counts them.
func waitCounted(t *testing.T, namespace string, count func(*testing.T, string) map[string]int, ok func(map[string]int) bool, what string) {
	t.Helper()
	var last map[string]int
	poll(t, what, func(context.Context) (bool, error) {
		last = count(t, namespace)
		return ok(last), nil
	}, func() string { return fmt.Sprintf("bound %v; waiting: %s", last, waiting(t, namespace)) })
}

func waitNoPods(t *testing.T, namespace string) {
	t.Helper()
	poll(t, "pods of "+namespace+" gone", func(context.Context) (bool, error) {
		return len(listPods(t, namespace)) == 0, nil
	}, func() string { return "" })
}

// setPhase moves the bound pods of group to phase, as their kubelets would.
func setPhase(t *testing.T, namespace, group string, phase v1.PodPhase) {
	t.Helper()
	for _, p := range listPods(t, namespace) {
		if p.Labels[schedulingv1beta1.PodGroupLabel] != group || p.Spec.NodeName == "" {
			continue
		}
		p.Status.Phase = phase
		if _, err := cluster.Kube.CoreV1().Pods(namespace).UpdateStatus(context.Background(), &p, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("pod %s %s: %v", p.Name, phase, err)
		}
	}
}

// memberNames names the pods of group, in name order.
func memberNames(t *testing.T, namespace, group string) []string {
	t.Helper()
	var names []string
	for _, p := range listPods(t, namespace) {
		if p.Labels[schedulingv1beta1.PodGroupLabel] == group {
			names = append(names, p.Name)
		}
	}
	slices.Sort(names)
	return names
}

func deletePod(t *testing.T, namespace, name string) {
	t.Helper()
	if err := cluster.Kube.CoreV1().Pods(namespace).Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatalf("delete pod %s: %v", name, err)
	}
}

// deleteMembers deletes the pods of group.
func deleteMembers(t *testing.T, namespace, group string) {
	t.Helper()
	err := cluster.Kube.CoreV1().Pods(namespace).DeleteCollection(context.Background(), metav1.DeleteOptions{GracePeriodSeconds: new(int64)},
		metav1.ListOptions{LabelSelector: schedulingv1beta1.PodGroupLabel + "=" + group})
	if err != nil {
		t.Fatal(err)
	}
}

// mirror returns queue-scheduler's PodGroup of that name, or nil.
func mirror(t *testing.T, namespace, name string) *schedulingv1beta1.PodGroup {
	t.Helper()
	pg, err := cluster.Queues.SchedulingV1beta1().PodGroups(namespace).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return pg
}

// describeMirror says what queue-scheduler's PodGroup of that name is and why, for a failure message.
func describeMirror(t *testing.T, namespace, name string) string {
	t.Helper()
	pg := mirror(t, namespace, name)
	if pg == nil {
		return "no mirror PodGroup " + namespace + "/" + name
	}
	return fmt.Sprintf("mirror PodGroup %s/%s in queue %q: phase %q, conditions %v", namespace, name, pg.Spec.Queue, pg.Status.Phase, pg.Status.Conditions)
}

// waitMirrorCondition waits for the mirror's Unschedulable condition to say text.
func waitMirrorCondition(t *testing.T, namespace, name, text string) {
	t.Helper()
	var last string
	poll(t, fmt.Sprintf("PodGroup %s Unschedulable with %q", name, text), func(context.Context) (bool, error) {
		pg := mirror(t, namespace, name)
		if pg == nil {
			return false, nil
		}
		c := meta.FindStatusCondition(pg.Status.Conditions, schedulingv1beta1.PodGroupUnschedulable)
		if c != nil {
			last = c.Message
		}
		return c != nil && c.Status == metav1.ConditionTrue && strings.Contains(c.Message, text), nil
	}, func() string { return "last message " + last })
}
