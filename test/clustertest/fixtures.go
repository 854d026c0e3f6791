package clustertest

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/queue-scheduler/queue-scheduler/pkg/localcluster"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// NodesAndNamespace creates count nodes node-0, node-1… of cpu CPUs and 64Gi each, and the namespace
// the package's work runs in.
func NodesAndNamespace(ctx context.Context, c *localcluster.Cluster, count int, cpu, namespace string) error {
	for i := range count {
		if _, err := c.Kube.CoreV1().Nodes().Create(ctx, util.MakeNode(fmt.Sprintf("node-%d", i), cpu, "64Gi"), metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	_, err := c.Kube.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{})
	return err
}

// CloseAndDelete closes the queue and deletes it once the controller lets it go (its pods gone),
// within timeout; a failure is the test's error.
func CloseAndDelete(t *testing.T, c *localcluster.Cluster, name string, timeout time.Duration) {
	t.Helper()
	api := c.Queues.SchedulingV1beta1().Queues()
	if _, err := api.Patch(context.Background(), name, types.MergePatchType, []byte(`{"spec":{"state":"Closed"}}`), metav1.PatchOptions{}); err != nil {
		t.Errorf("close queue %s: %v", name, err)
		return
	}
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, timeout, true, func(ctx context.Context) (bool, error) {
		err := api.Delete(ctx, name, metav1.DeleteOptions{})
		return err == nil || apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Errorf("queue %s could not be deleted within %s", name, timeout)
	}
}
