package cli

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// --dry-run=client sends nothing and --dry-run=server stores nothing; both say so.
func TestDryRun(t *testing.T) {
	removeQueues(t, "dry")
	mustRun(t, "create", "dry", "--all-namespaces", "--weight", "2")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"create", "ghost", "--all-namespaces", "--dry-run=client"}, "queue/ghost created (dry run)"},
		{[]string{"create", "ghost", "--all-namespaces", "--dry-run=server"}, "queue/ghost created (server dry run)"},
		{[]string{"update", "dry", "--weight", "5", "--dry-run=server"}, "queue/dry updated (server dry run)"},
		{[]string{"suspend", "dry", "--direct", "--dry-run=server"}, "queue/dry spec.state set to Suspended (server dry run)"},
		{[]string{"suspend", "dry", "--dry-run=client"}, "command/suspend-dry-<generated> created: SuspendQueue dry (dry run)"},
		{[]string{"close", "dry", "--dry-run=server"}, "command/close-dry-xxxxx created: CloseQueue dry (server dry run)"},
	} {
		expect(t, strings.Join(tt.args, " "), mustRun(t, tt.args...), tt.want)
	}
	q, err := cluster.Queues.SchedulingV1beta1().Queues().Get(context.Background(), "dry", metav1.GetOptions{})
	if err != nil || q.Spec.Weight != 2 || q.Spec.State != "Open" {
		t.Errorf("dry runs changed queue dry: %+v (err %v)", q.Spec, err)
	}
	if _, err := cluster.Queues.SchedulingV1beta1().Queues().Get(context.Background(), "ghost", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a dry run created queue ghost (err %v)", err)
	}
}

// vcctl's operate spelling updates the weight and issues state Commands.
func TestOperate(t *testing.T) {
	removeQueues(t, "vc")
	mustRun(t, "create", "vc", "--all-namespaces")
	expect(t, "operate update", mustRun(t, "operate", "-n", "vc", "-a", "update", "-w", "3"), "queue/vc updated")
	expect(t, "operate suspend", mustRun(t, "operate", "-n", "vc", "-a", "suspend"), "command/suspend-vc-xxxxx created: SuspendQueue vc")
	waitQueue(t, "vc", "Suspended with weight 3", func(q *queue) bool { return q.Status.State == "Suspended" && q.Spec.Weight == 3 })
	expect(t, "operate resume", mustRun(t, "operate", "-n", "vc", "-a", "resume"), "command/resume-vc-xxxxx created: ResumeQueue vc")
	waitQueue(t, "vc", "Open", func(q *queue) bool { return q.Status.State == "Open" })
}

// Queue names complete from the cluster.
func TestCompletion(t *testing.T) {
	removeQueues(t, "comp-a", "comp-b")
	mustRun(t, "create", "comp-a", "--all-namespaces")
	mustRun(t, "create", "comp-b", "--all-namespaces")
	// The shell reads the names and the directive (4: no file completion); cobra's note on the
	// directive goes to stderr.
	out := mustRun(t, "__complete", "get", "comp")
	names, _, _ := strings.Cut(out, "Completion ended")
	expect(t, "__complete get comp", names, `
comp-a
comp-b
:4`[1:])
}

// The built binary exits non-zero with a one-line reason.
func TestBinaryExitCode(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "kubectl-queue")
	build := exec.Command("go", "build", "-o", bin, "github.com/queue-scheduler/queue-scheduler/cmd/kubectl-queue")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "get", "no-such-queue", "--kubeconfig", cluster.Kubeconfig)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("exit: %v, want exit code 1", err)
	}
	if got := stderr.String(); got != "error: queue \"no-such-queue\" not found\n" {
		t.Errorf("stderr = %q, want one line naming the queue", got)
	}
	out, err := exec.Command(bin, "get", "root", "--kubeconfig", cluster.Kubeconfig).Output()
	if err != nil || !strings.HasPrefix(string(out), "NAME ") {
		t.Errorf("get root: %v\n%s", err, out)
	}
}
