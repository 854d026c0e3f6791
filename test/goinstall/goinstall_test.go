// Package goinstall tests that kubectl-queue installs the way README.md says, with
// `go install github.com/queue-scheduler/queue-scheduler/cmd/kubectl-queue@latest`, into a clean
// GOPATH, from a module proxy directory that serves this working tree as a release tag would
// publish it.
package goinstall

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/queue-scheduler/queue-scheduler/hack/modproxy"
)

const rootModule = "github.com/queue-scheduler/queue-scheduler"

func TestGoInstallKubectlQueue(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	version := strings.TrimSpace(string(raw))
	proxy := t.TempDir()
	for _, m := range []modproxy.Module{
		{Path: rootModule, Dir: root, Version: version},
		{Path: rootModule + "/cmd/kubectl-queue", Dir: filepath.Join(root, "cmd", "kubectl-queue"), Version: version},
	} {
		if err := modproxy.Write(proxy, m); err != nil {
			t.Fatal(err)
		}
	}
	env, err := modproxy.Env(proxy)
	if err != nil {
		t.Fatal(err)
	}
	gopath := t.TempDir()
	install := exec.Command("go", "install", rootModule+"/cmd/kubectl-queue@latest")
	install.Dir = t.TempDir() // outside any module, as a user's shell would be
	install.Env = append(append(os.Environ(), env...),
		"GOPATH="+gopath, "GOMODCACHE="+filepath.Join(gopath, "pkg", "mod"), "GOBIN=",
		"GOFLAGS=-modcacherw") // so that the test can remove its module cache
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("go install %s/cmd/kubectl-queue@latest: %v\n%s", rootModule, err, out)
	}
	out, err := exec.Command(filepath.Join(gopath, "bin", "kubectl-queue"), "version").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl-queue version: %v\n%s", err, out)
	}
	if want := "kubectl-queue " + version + ","; !strings.HasPrefix(string(out), want) {
		t.Errorf("kubectl-queue version printed %q, want it to start with %q: the version it was installed at", out, want)
	}
}
