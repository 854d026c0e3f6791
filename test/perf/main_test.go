// Package perf holds the benchmarks of queue-scheduler (make bench), run on the same embedded control
// plane as the integration tests: an in-process etcd, kube-apiserver and queue-scheduler, with fake
// nodes. A benchmark measures; it asserts nothing about speed.
package perf

import (
	"context"
	"flag"
	"os"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/queue-scheduler/queue-scheduler/manifests"
	"github.com/queue-scheduler/queue-scheduler/pkg/localcluster"
	"github.com/queue-scheduler/queue-scheduler/test/clustertest"
)

// Scale of the benchmarks; raise them on bigger machines.
var (
	queueCount = flag.Int("queues", 100, "queues the pods are spread across")
	podCount   = flag.Int("pods", 5000, "pods to schedule")
	nodeCount  = flag.Int("nodes", 100, "fake nodes")
)

var cluster *localcluster.Cluster

func TestMain(m *testing.M) {
	profile, err := withVanillaProfile(manifests.SchedulerConfig)
	if err != nil {
		panic(err)
	}
	os.Exit(clustertest.RunWithCluster(m, localcluster.Options{SchedulerProfile: profile}, func(_ context.Context, c *localcluster.Cluster) error {
		cluster = c
		return nil
	}))
}

// withVanillaProfile adds a profile with kube-scheduler's defaults, so that a benchmark can compare
// both in one process on one cluster.
func withVanillaProfile(config []byte) ([]byte, error) {
	cfg := map[string]any{}
	if err := yaml.Unmarshal(config, &cfg); err != nil {
		return nil, err
	}
	profiles, _ := cfg["profiles"].([]any)
	cfg["profiles"] = append(profiles, map[string]any{"schedulerName": vanillaScheduler})
	return yaml.Marshal(cfg)
}
