package cli

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// createPods creates count pods of queue in the default namespace and waits until they are bound.
func createPods(t *testing.T, queue string, count int, requests map[v1.ResourceName]string) []string {
	t.Helper()
	var names []string
	for i := range count {
		name := fmt.Sprintf("%s-%d", queue, i)
		pod := util.MakePod("default", name).Label(schedulingv1beta1.QueueLabel, queue).Req(requests).Obj()
		if _, err := cluster.Kube.CoreV1().Pods("default").Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create pod %s: %v", name, err)
		}
		names = append(names, name)
	}
	if err := util.WaitForPods(context.Background(), cluster.Kube, "default", names, settle, "bound", util.IsBound); err != nil {
		t.Fatal(err)
	}
	return names
}

// deletePods deletes the pods at once and waits until they are gone.
func deletePods(t *testing.T, names []string) {
	t.Helper()
	zero := int64(0)
	pods := cluster.Kube.CoreV1().Pods("default")
	for _, name := range names {
		if err := pods.Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			t.Fatalf("delete pod %s: %v", name, err)
		}
	}
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		for _, name := range names {
			if _, err := pods.Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("pods %v not gone within %s", names, settle)
	}
}
