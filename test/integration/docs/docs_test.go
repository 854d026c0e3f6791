// Package docs runs the commands of the user documentation, as a user types them, against the
// cluster of `queuesim up`, with upstream kubectl (pinned in hack/tools) and kubectl queue built
// from this tree.
package docs

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/queue-scheduler/queue-scheduler/pkg/queuesim"
)

// pages are run in this order, on one cluster: a page may use what an earlier one made (the
// troubleshooting and visibility pages read getting-started's team-a).
var pages = []string{"README.md", "docs/getting-started.md", "docs/troubleshooting.md", "docs/visibility.md"}

// notRun are the user-typed blocks this test does not run, and why. Every other block is run.
var notRun = map[blockKey]string{
	{"README.md", "make run     # plays the queuesim demo: the whole system on an embedded control plane, no cluster"}: "make run plays examples/scenarios/demo.yaml for 80 s; test/integration/queuesim's TestDemoPlaysAsItsCommentsSay plays it and checks its report, and make test (the block's other line) is what runs this test",
	{"README.md", "export IMAGE=registry.example.com/queue-scheduler:v0.1.0"}:                                          "installs on a real cluster: needs a registry its nodes pull from, skopeo, and nodes that run the image",
	{"docs/visibility.md", "queuesim replay snapshot.yaml --time-scale 30 --out out/replay"}:                           "queuesim replay and run play minutes of real time; test/integration/queuesim plays both",
}

// outputNotCompared are the blocks whose commands are run and must succeed (or fail, as shown)
// but whose shown output is an illustration from another cluster, and why.
var outputNotCompared = map[blockKey]string{
	{"docs/visibility.md", `$ kubectl get podgroups.scheduling.queue-scheduler.io train -n team-a -o jsonpath='{.status.conditions[?(@.type=="ExpectedStart")].message}'`}: "the condition is a waiting gang's; getting-started's gang (trainer) has started, and the condition is gone",
	{"docs/visibility.md", "$ kubectl get pendingworkloads -n team-a"}: "getting-started leaves nothing waiting in team-a (No resources found); the table's columns are pkg/visibility's TestTables'",
}

// placeholders are, per page, the words a reader replaces (a pod's name, a namespace), and what
// this test puts in their place: getting-started's objects.
var placeholders = map[string][]string{
	"docs/troubleshooting.md": {
		"kubectl get pod P ", `kubectl get pod "$(kubectl get pods -n team-a -l job-name=hello -o jsonpath='{.items[0].metadata.name}')" -n team-a `,
		"-n NS ", "-n team-a ",
		"kubectl queue jobs QUEUE", "kubectl queue jobs team-a",
		"kubectl queue describe QUEUE", "kubectl queue describe team-a",
		"podgroups.scheduling.queue-scheduler.io train -n team-a-jobs", "podgroups.scheduling.queue-scheduler.io trainer -n team-a",
		"-n team-a-jobs", "-n team-a",
	},
	"docs/visibility.md": {
		"podgroups.scheduling.queue-scheduler.io train -n team-a", "podgroups.scheduling.queue-scheduler.io trainer -n team-a",
	},
}

// leastCommands is how many commands each page had when this test was written: fewer means blocks
// are no longer found, and would silently go unchecked.
var leastCommands = map[string]int{"README.md": 9, "docs/getting-started.md": 17, "docs/troubleshooting.md": 10, "docs/visibility.md": 7}

// reads are the commands that only read: one whose output the page shows after a change is read
// again until it matches (a Job's pods appear, the live view catches up), within retryFor.
var reads = regexp.MustCompile(`^\s*kubectl (get|describe|queue (list|ls|get|jobs|describe|eta|what-if))\b`)

const (
	// commandTimeout bounds every command, --wait and kubectl wait included.
	commandTimeout = 2 * time.Minute
	retryFor       = 30 * time.Second
)

func TestDocsCommands(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	buildTools(t, root, bin)
	kubeconfig := up(t)
	work := workDir(t, root)
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "KUBECONFIG="+kubeconfig, "HOME="+t.TempDir())

	seen := map[blockKey]bool{}
	for _, page := range pages {
		src, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		cmds, files := extract(page, src)
		for name, content := range files {
			if err := os.WriteFile(filepath.Join(work, name), []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		ran := 0
		for _, c := range cmds {
			seen[c.block] = true
			if _, skip := notRun[c.block]; skip {
				continue
			}
			ran++
			for r := placeholders[page]; len(r) > 1; r = r[2:] {
				c.text = strings.ReplaceAll(c.text, r[0], r[1])
			}
			if failure := runCommand(work, env, c); failure != "" {
				t.Errorf("%s:%d: %s", page, c.line, failure)
			}
		}
		t.Logf("%s: ran %d commands", page, ran)
		if ran < leastCommands[page] {
			t.Errorf("%s: ran %d commands, want at least %d: did a block's fence change so that its commands are no longer found?",
				page, ran, leastCommands[page])
		}
	}
	for key := range notRun {
		if !seen[key] {
			t.Errorf("notRun names a block that is on no page: %s %q", key.page, key.firstLine)
		}
	}
	for key := range outputNotCompared {
		if !seen[key] {
			t.Errorf("outputNotCompared names a block that is on no page: %s %q", key.page, key.firstLine)
		}
	}
}

// workDir is where the commands run: a folder that holds the repository's top-level files and
// folders (links to them) beside the files the pages show, so that a page's commands read
// examples/… as from the repository root, and what they write stays out of the tree.
func workDir(t *testing.T, root string) string {
	t.Helper()
	work := t.TempDir()
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.Symlink(filepath.Join(root, e.Name()), filepath.Join(work, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	return work
}

// runCommand runs c in bash from the repository root and says how it differs from the page, or "".
// A read is retried until it matches, within retryFor.
func runCommand(root string, env []string, c command) string {
	var failure string
	check := func(ctx context.Context) (bool, error) {
		failure = runOnce(ctx, root, env, c)
		return failure == "", nil
	}
	ctx := context.Background()
	if ok, _ := check(ctx); ok || !reads.MatchString(c.text) {
		return failure
	}
	_ = wait.PollUntilContextTimeout(ctx, time.Second, retryFor, false, check)
	return failure
}

func runOnce(ctx context.Context, root string, env []string, c command) string {
	ctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", c.text)
	cmd.Dir, cmd.Env, cmd.WaitDelay = root, env, 5*time.Second
	out, err := cmd.CombinedOutput()
	switch {
	case ctx.Err() != nil:
		return fmt.Sprintf("%s\ndid not end within %s; it printed:\n%s", c.text, commandTimeout, out)
	case err != nil && !c.wantFail:
		return fmt.Sprintf("%s\nfailed (%v); it printed:\n%s", c.text, err, out)
	case err == nil && c.wantFail:
		return fmt.Sprintf("%s\nsucceeded, but the page shows it failing; it printed:\n%s", c.text, out)
	}
	if _, skip := outputNotCompared[c.block]; skip {
		return ""
	}
	if want := keyLine(c.shown); want != "" && !printed(string(out), want) {
		return fmt.Sprintf("%s\nprinted no line like the page's %q; it printed:\n%s", c.text, want, out)
	}
	return ""
}

// buildTools builds kubectl (the version pinned in hack/tools, stamped with its release as
// upstream's build does) and kubectl-queue into bin.
func buildTools(t *testing.T, root, bin string) {
	t.Helper()
	goRun := func(dir string, extraEnv []string, args ...string) string {
		cmd := exec.Command("go", args...)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), extraEnv...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s (in %s): %v\n%s", strings.Join(args, " "), dir, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	tools := filepath.Join(root, "hack", "tools")
	noWork := []string{"GOWORK=off"}
	// k8s.io/kubectl v0.X.Y is kubectl of Kubernetes v1.X.Y.
	version := "v1" + strings.TrimPrefix(goRun(tools, noWork, "list", "-m", "-f", "{{.Version}}", "k8s.io/kubectl"), "v0")
	parts := strings.SplitN(strings.TrimPrefix(version, "v"), ".", 3)
	const pkg = "k8s.io/component-base/version"
	ldflags := fmt.Sprintf("-X %s.gitVersion=%s -X %s.gitMajor=%s -X %s.gitMinor=%s", pkg, version, pkg, parts[0], pkg, parts[1])
	goRun(tools, noWork, "build", "-ldflags", ldflags, "-o", filepath.Join(bin, "kubectl"), "./kubectl")
	goRun(root, nil, "build", "-o", filepath.Join(bin, "kubectl-queue"), "./cmd/kubectl-queue")
}

// up runs `queuesim up` until the test ends and returns its kubeconfig.
func up(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- queuesim.Up(ctx, queuesim.UpOptions{Kubeconfig: kubeconfig, Out: io.Discard, Ready: func(p string) { ready <- p }})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("queuesim up: %v", err)
		}
	})
	select {
	case path := <-ready:
		return path
	case err := <-done:
		done <- err
		t.Fatalf("queuesim up ended before it served: %v", err)
	case <-time.After(2 * time.Minute):
		t.Fatal("queuesim up did not serve within 2 minutes")
	}
	return ""
}
