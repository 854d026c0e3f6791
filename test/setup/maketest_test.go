// Package setup tests README's test command as a user on a machine without a C compiler runs it.
package setup

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runMakeTest runs README's `make test` in the repository root on two small packages, with env
// added, and returns what it printed.
func runMakeTest(t *testing.T, env ...string) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("make", "test", "UNIT_PKGS=./pkg/textout", "INTEGRATION_PKGS=./pkg/version", "REALTIME_PKGS=")
	cmd.Dir, cmd.Env = root, append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make test %v: %v\n%s", env, err, out)
	}
	return string(out)
}

// Without cgo, `make test` says that the unit tests run without the race detector, and runs them so;
// with cgo and a C compiler, it runs them with it, and says nothing.
func TestMakeTestRunsWithoutCgo(t *testing.T) {
	const said = "the unit tests run WITHOUT the race detector"
	out := runMakeTest(t, "CGO_ENABLED=0")
	if !strings.Contains(out, said) || strings.Contains(out, "-race") || !strings.Contains(out, "ok  \tgithub.com/queue-scheduler/queue-scheduler/pkg/textout") {
		t.Errorf("make test with CGO_ENABLED=0: want the unit tests run without -race, saying so:\n%s", out)
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		return // the rest needs a C compiler, which CGO_ENABLED=0 stands in for above
	}
	out = runMakeTest(t, "CGO_ENABLED=1")
	if strings.Contains(out, said) || !strings.Contains(out, "go test -race") {
		t.Errorf("make test with cgo and gcc: want the unit tests run with -race:\n%s", out)
	}
}
