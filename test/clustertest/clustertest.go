// Package clustertest starts the one local cluster a test package shares.
package clustertest

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

// RunWithCluster is a TestMain body: it starts one local cluster for the package, runs setUp and the
// tests, stops the cluster, and returns the exit code. The API server and scheduler log a great deal;
// see SetUpLogs for how to see their logs.
func RunWithCluster(m *testing.M, opts localcluster.Options, setUp func(context.Context, *localcluster.Cluster) error) int {
	flag.Parse()
	SetUpLogs()
	defer startWatchdog()()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := localcluster.Start(ctx, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "start local cluster:", err)
		return 1
	}
	defer c.Stop()
	if err := setUp(ctx, c); err != nil {
		fmt.Fprintln(os.Stderr, "set up:", err)
		return 1
	}
	return m.Run()
}

// SetUpLogs silences klog unless QS_TEST_LOGS asks for the logs (1, or a klog verbosity), with
// QS_TEST_VMODULE as klog's -vmodule.
func SetUpLogs() {
	level := os.Getenv("QS_TEST_LOGS")
	if level == "" {
		klog.SetLogger(logr.Discard())
		return
	}
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	if level != "1" {
		_ = fs.Set("v", level)
	}
	_ = fs.Set("vmodule", os.Getenv("QS_TEST_VMODULE"))
}
