// Package cli tests kubectl-queue against a control plane of its own (so that `list` sees only the
// queues these tests make), running the command in-process and, once, as the built binary.
package cli

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/kubectlqueue"
	"github.com/queue-scheduler/queue-scheduler/pkg/localcluster"
	"github.com/queue-scheduler/queue-scheduler/test/clustertest"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

var cluster *localcluster.Cluster

// settle bounds every wait for the controller.
const settle = 30 * time.Second

func TestMain(m *testing.M) {
	os.Exit(clustertest.RunWithCluster(m, localcluster.Options{}, func(ctx context.Context, c *localcluster.Cluster) error {
		if _, err := c.Kube.CoreV1().Nodes().Create(ctx, util.MakeNode("node-0", "16", "64Gi"), metav1.CreateOptions{}); err != nil {
			return err
		}
		cluster = c
		// The controller creates root and default; wait so that every list sees them.
		return wait.PollUntilContextTimeout(ctx, util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
			for _, name := range []string{schedulingv1beta1.RootQueue, schedulingv1beta1.DefaultQueue} {
				q, err := c.Queues.SchedulingV1beta1().Queues().Get(ctx, name, metav1.GetOptions{})
				if err != nil || q.Status.State != schedulingv1beta1.QueueStateOpen {
					return false, nil
				}
			}
			return true, nil
		})
	}))
}

// run executes `kubectl queue args…` in-process against the cluster and returns what it printed.
func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	cmd := kubectlqueue.NewCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out})
	kubeconfig := []string{"--kubeconfig", cluster.Kubeconfig}
	if len(args) > 0 && args[0] == "__complete" {
		cmd.SetArgs(append(append([]string{args[0]}, kubeconfig...), args[1:]...))
	} else {
		cmd.SetArgs(append(kubeconfig, args...))
	}
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

// mustRun is run for a command that has to succeed.
func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, err := run(t, args...)
	if err != nil {
		t.Fatalf("kubectl queue %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// generated hides the random suffixes of generated names.
var generated = regexp.MustCompile(`-[a-z0-9]{5}( created)`)

// expect compares printed text with the expected text, line by line.
func expect(t *testing.T, what, got, want string) {
	t.Helper()
	got = generated.ReplaceAllString(got, "-xxxxx$1")
	if strings.TrimRight(got, "\n") != strings.TrimRight(want, "\n") {
		t.Errorf("%s printed:\n%s\nwant:\n%s", what, got, want)
	}
}

// waitQueue waits until the queue satisfies ok.
func waitQueue(t *testing.T, name, what string, ok func(*schedulingv1beta1.Queue) bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		q, err := cluster.Queues.SchedulingV1beta1().Queues().Get(ctx, name, metav1.GetOptions{})
		return err == nil && ok(q), nil
	})
	if err != nil {
		t.Fatalf("queue %s not %s within %s", name, what, settle)
	}
}

// removeQueues closes and deletes the queues after the test, last first, so that `list` in another
// test sees only its own.
func removeQueues(t *testing.T, names ...string) {
	t.Helper()
	t.Cleanup(func() {
		for i := len(names) - 1; i >= 0; i-- {
			if _, err := run(t, "delete", names[i], "--close-first", "--wait=30s", "--direct"); err != nil {
				t.Errorf("remove queue %s: %v", names[i], err)
			}
		}
	})
}
