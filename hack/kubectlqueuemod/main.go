// Command kubectlqueuemod tidies cmd/kubectl-queue/go.mod and go.sum. The kubectl plugin is a module
// of its own so that `go install github.com/queue-scheduler/queue-scheduler/cmd/kubectl-queue@vX`
// works: the root module needs replace directives (k8s.io/kubernetes points every staging module at
// v0.0.0), which go install refuses. The plugin's module requires the root module at the version in
// VERSION, which no proxy serves until it is tagged, so tidy runs against a proxy directory holding
// this working tree's root module. The root module's own go.sum lines are left out: they change with
// every commit, and go install checks the tagged module against the checksum database.
package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/queue-scheduler/queue-scheduler/hack/modproxy"
)

const (
	rootModule = "github.com/queue-scheduler/queue-scheduler"
	pluginDir  = "cmd/kubectl-queue"
)

func main() {
	if err := tidy(); err != nil {
		fmt.Fprintf(os.Stderr, "kubectlqueuemod: %v\n", err)
		os.Exit(1)
	}
}

func tidy() error {
	version, err := os.ReadFile("VERSION")
	if err != nil {
		return err
	}
	proxy, err := os.MkdirTemp("", "modproxy")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(proxy) }()
	root := modproxy.Module{Path: rootModule, Dir: ".", Version: strings.TrimSpace(string(version))}
	if err := modproxy.Write(proxy, root); err != nil {
		return err
	}
	if err := run(pluginDir, "go", "mod", "edit", "-require="+rootModule+"@"+root.Version); err != nil {
		return err
	}
	env, err := modproxy.Env(proxy)
	if err != nil {
		return err
	}
	cmd := exec.Command("go", "mod", "tidy")
	cmd.Dir, cmd.Env, cmd.Stderr = pluginDir, append(os.Environ(), env...), os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go mod tidy in %s: %w", pluginDir, err)
	}
	return withoutRootSums(filepath.Join(pluginDir, "go.sum"))
}

func withoutRootSums(goSum string) error {
	raw, err := os.ReadFile(goSum)
	if err != nil {
		return err
	}
	var kept bytes.Buffer
	for _, line := range strings.SplitAfter(string(raw), "\n") {
		if !strings.HasPrefix(line, rootModule+" ") {
			kept.WriteString(line)
		}
	}
	return os.WriteFile(goSum, kept.Bytes(), 0o644)
}

func run(dir, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Stderr = dir, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s in %s: %w", name, strings.Join(args, " "), dir, err)
	}
	return nil
}
