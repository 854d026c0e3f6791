// Package integration tests queue-scheduler against a real kube-apiserver and etcd running in this
// process, with the queue-scheduler running from its real profile. One control plane serves the
// whole package; each test isolates itself with its own namespace and queues.
package integration

import (
	"context"
	"fmt"
	"os"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/queue-scheduler/queue-scheduler/pkg/localcluster"
	"github.com/queue-scheduler/queue-scheduler/test/clustertest"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// cluster is the package's control plane.
var cluster *localcluster.Cluster

// nodes are the fake nodes every test schedules onto.
const (
	nodeCount  = 4
	nodeCPU    = "64"
	nodeMemory = "256Gi"
)

func TestMain(m *testing.M) {
	// The API server authorizes with RBAC, as a real one does, with the shipped roles folded into
	// admin, edit and view, so that the shipped roles are tested.
	opts := localcluster.Options{RBAC: true}
	os.Exit(clustertest.RunWithCluster(m, opts, func(ctx context.Context, c *localcluster.Cluster) error {
		for i := range nodeCount {
			node := util.MakeNode(fmt.Sprintf("node-%d", i), nodeCPU, nodeMemory)
			if _, err := c.Kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
				return err
			}
		}
		cluster = c
		return nil
	}))
}
