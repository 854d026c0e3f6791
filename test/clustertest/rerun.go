package clustertest

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// runs numbers each test's runs in this process (go test -count=N runs each N times against the
// package's one cluster), by test name; run holds the number of each run under way.
var (
	runsMu sync.Mutex
	runs   = map[string]int{}
	run    = map[testing.TB]int{}
)

// Run is the number of t's run of its test in this process: 1 for the first, N for the Nth of
// go test -count=N.
func Run(t testing.TB) int {
	runsMu.Lock()
	defer runsMu.Unlock()
	n, ok := run[t]
	if !ok {
		runs[t.Name()]++
		n = runs[t.Name()]
		run[t] = n
		t.Cleanup(func() {
			runsMu.Lock()
			defer runsMu.Unlock()
			delete(run, t)
		})
	}
	return n
}

// Named is name in t's first run, and name-rN in its Nth: the objects a run leaves on the package's
// cluster (queues, namespaces, which no controller deletes here) keep their names, and a run of the
// test again gives its own new ones. Every call of one run gives the same name for the same name,
// and a name given already is given back as it is.
func Named(t testing.TB, name string) string {
	n := Run(t)
	if suffix := fmt.Sprintf("-r%d", n); n > 1 && !strings.HasSuffix(name, suffix) {
		return name + suffix
	}
	return name
}
