// Package schedperf runs upstream kube-scheduler's own benchmark, scheduler_perf, on its
// SchedulingBasic, PreemptionBasic and GangScheduling workloads twice each: with the default profile,
// and with the queue-scheduler profile and plugins (the embedded controller included), and compares
// the scheduling throughput of the two.
package schedperf

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"go.etcd.io/etcd/server/v3/etcdmain"
	perf "k8s.io/kubernetes/test/integration/scheduler_perf"
)

// etcdName is the name this binary answers to as etcd. scheduler_perf starts its control plane's etcd
// as the program "etcd" found on PATH; here, that is this binary, which then runs etcd's own main.
const etcdName = "etcd"

func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == etcdName {
		etcdmain.Main(os.Args)
		return
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "schedperf-etcd-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := os.Symlink(self, filepath.Join(dir, etcdName)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := os.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := perf.InitTests(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}
