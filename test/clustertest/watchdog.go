package clustertest

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"runtime"
	"time"
)

// watchdogMargin is how long before go test's own -timeout the watchdog reports: go test's report
// starts with the tests running and then lists every goroutine of the in-process API server, so
// that a log cut to its tail loses the one line that matters.
const watchdogMargin = time.Minute

// startWatchdog reports, shortly before the package's -timeout, the goroutines blocked in a test or
// in the cluster's start and stop, and exits. Its report is short and printed last. It returns a
// function that stops it.
func startWatchdog() func() {
	timeout, ok := testTimeout()
	if !ok || timeout <= 2*watchdogMargin {
		return func() {}
	}
	timer := time.AfterFunc(timeout-watchdogMargin, func() {
		fmt.Fprintf(os.Stderr, "clustertest: the package is still running %v after it started, %v before its -timeout; "+
			"the goroutines in its tests and its cluster's start and stop:\n%s", timeout-watchdogMargin, watchdogMargin, blockedInTests())
		os.Exit(2)
	})
	return func() { timer.Stop() }
}

// testTimeout is the -test.timeout go test passed.
func testTimeout() (time.Duration, bool) {
	f := flag.Lookup("test.timeout")
	if f == nil {
		return 0, false
	}
	d, err := time.ParseDuration(f.Value.String())
	return d, err == nil && d > 0
}

// blockedInTests is the stacks of the goroutines with a frame in a _test.go file or in this
// package's cluster start and stop.
func blockedInTests() []byte {
	buf := make([]byte, 64<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []byte
	for g := range bytes.SplitSeq(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte("_test.go:")) || bytes.Contains(g, []byte("localcluster.(*Cluster).Stop")) {
			out = append(append(out, g...), "\n\n"...)
		}
	}
	return out
}
