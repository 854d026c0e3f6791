// Package integration tests queue-scheduler against a real kube-apiserver and etcd running in this
// process, with the queue-scheduler running from its real profile. One control plane serves the
// whole package; each test isolates itself with its own namespace and queues.
package integration

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/queue-scheduler/queue-scheduler/pkg/localcluster"
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
	os.Exit(run(m))
}

func run(m *testing.M) int {
	flag.Parse()
	if os.Getenv("QS_TEST_LOGS") == "" {
		// The API server and scheduler log a great deal; keep the test output readable. Set
		// QS_TEST_LOGS=1 to see them.
		klog.SetLogger(logr.Discard())
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := localcluster.Start(ctx, localcluster.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start local cluster:", err)
		return 1
	}
	defer c.Stop()
	for i := range nodeCount {
		node := util.MakeNode(fmt.Sprintf("node-%d", i), nodeCPU, nodeMemory)
		if _, err := c.Kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			fmt.Fprintln(os.Stderr, "create node:", err)
			return 1
		}
	}
	cluster = c
	return m.Run()
}
