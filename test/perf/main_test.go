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

	"github.com/queue-scheduler/queue-scheduler/pkg/localcluster"
	"github.com/queue-scheduler/queue-scheduler/test/clustertest"
)

// Scale of the benchmarks; raise them on bigger machines.
var (
	queueCount = flag.Int("queues", 100, "queues the pods are spread across")
	podCount   = flag.Int("pods", 5000, "pods to schedule")
	nodeCount  = flag.Int("nodes", 100, "fake nodes")
	// schedulerConfig lets a run try other QueueState args (the controller's status pacing, say).
	schedulerConfig = flag.String("scheduler-config", "", "KubeSchedulerConfiguration of the queue-scheduler; manifests/scheduler-config.yaml when empty")
)

var cluster *localcluster.Cluster

func TestMain(m *testing.M) {
	flag.Parse()
	if flag.Lookup("test.bench").Value.String() == "" {
		// No benchmark asked for: the harness's own tests need no cluster.
		os.Exit(m.Run())
	}
	opts := localcluster.Options{VanillaSchedulerName: vanillaScheduler, LimitSchedulerName: limitScheduler}
	if *schedulerConfig != "" {
		profile, err := os.ReadFile(*schedulerConfig)
		if err != nil {
			fmt.Fprintln(os.Stderr, "-scheduler-config:", err)
			os.Exit(2)
		}
		opts.SchedulerProfile = profile
	}
	code := clustertest.RunWithCluster(m, opts, func(_ context.Context, c *localcluster.Cluster) error {
		cluster = c
		return nil
	})
	if err := writeResults(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "write the results:", err)
		code = 1
	}
	os.Exit(code)
}
