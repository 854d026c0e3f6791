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
// set QS_TEST_LOGS=1 to see their logs, or a higher number for that klog verbosity; QS_TEST_VMODULE
// sets klog's -vmodule (e.g. reporter=5,queueunit=5) to raise it for some files only.
func RunWithCluster(m *testing.M, opts localcluster.Options, setUp func(context.Context, *localcluster.Cluster) error) int {
	flag.Parse()
	switch level := os.Getenv("QS_TEST_LOGS"); level {
	case "":
		klog.SetLogger(logr.Discard())
	default:
		fs := flag.NewFlagSet("klog", flag.ContinueOnError)
		klog.InitFlags(fs)
		if level != "1" {
			_ = fs.Set("v", level)
		}
		_ = fs.Set("vmodule", os.Getenv("QS_TEST_VMODULE"))
	}
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
