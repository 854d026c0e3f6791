// Package perf holds the benchmarks of queue-scheduler (make bench), run on the same embedded control
// plane as the integration tests: an in-process etcd, kube-apiserver and queue-scheduler, with fake
// nodes. A benchmark measures; it asserts nothing about speed.
package perf

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"

	"github.com/queue-scheduler/queue-scheduler/pkg/localcluster"
)

// Scale of the benchmarks; raise them on bigger machines.
var (
	queueCount = flag.Int("queues", 100, "queues the pods are spread across")
	podCount   = flag.Int("pods", 5000, "pods to schedule")
	nodeCount  = flag.Int("nodes", 100, "fake nodes")
)

var cluster *localcluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	flag.Parse()
	if os.Getenv("QS_TEST_LOGS") == "" {
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
	cluster = c
	return m.Run()
}
