package install

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/localcluster"
)

// buildScheduler builds cmd/queue-scheduler as make build does.
func buildScheduler(t *testing.T, dir string) string {
	t.Helper()
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	binary := filepath.Join(dir, "queue-scheduler")
	build := exec.Command("go", "build", "-o", binary, "./cmd/queue-scheduler")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/queue-scheduler: %v\n%s", err, out)
	}
	return binary
}

// serviceAccountKubeconfig writes a kubeconfig with a token of the shipped ServiceAccount, as the
// pod's projected token would give it.
func serviceAccountKubeconfig(ctx context.Context, t *testing.T, dir string) string {
	t.Helper()
	token, err := cluster.Kube.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, serviceAccount,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token of ServiceAccount %s/%s: %v", namespace, serviceAccount, err)
	}
	cfg := &rest.Config{Host: cluster.Config.Host, BearerToken: token.Status.Token}
	cfg.CAData = cluster.Config.CAData
	cfg.ServerName = cluster.Config.ServerName
	path := filepath.Join(dir, "serviceaccount.kubeconfig")
	if err := localcluster.WriteKubeconfig(cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// runScheduler runs the binary as the Deployment does, with the ServiceAccount's kubeconfig also for
// delegated authentication and authorization of its secure port. It returns a function that stops
// it (SIGTERM, as the kubelet would); the test's end stops it too. Its log is printed when the test
// fails.
func runScheduler(t *testing.T, dir, binary, configPath, kubeconfig, secureAddr string) (stop func()) {
	t.Helper()
	host, port, err := net.SplitHostPort(secureAddr)
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "queue-scheduler.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary,
		"--config="+configPath,
		"--bind-address="+host, "--secure-port="+port,
		"--authentication-kubeconfig="+kubeconfig, "--authorization-kubeconfig="+kubeconfig,
		"--v=2")
	cmd.Env = append(os.Environ(), "POD_NAMESPACE="+namespace)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(30 * time.Second):
				_ = cmd.Process.Kill()
				<-exited
			}
		})
	}
	t.Cleanup(func() {
		stop()
		_ = logFile.Close()
		if t.Failed() {
			if out, err := os.ReadFile(logPath); err == nil {
				t.Logf("queue-scheduler log:\n%s", tail(out, 200))
			}
		}
	})
	return stop
}

// tail returns the last n lines of out.
func tail(out []byte, n int) []byte {
	for i := len(out) - 2; i >= 0; i-- {
		if out[i] == '\n' {
			if n--; n == 0 {
				return out[i+1:]
			}
		}
	}
	return out
}

// waitForDefaultQueue waits for the controller to lead and create the default queue.
func waitForDefaultQueue(ctx context.Context, t *testing.T) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := cluster.Queues.SchedulingV1beta1().Queues().Get(ctx, schedulingv1beta1.DefaultQueue, metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("the scheduler did not create queue %q within a minute: %v", schedulingv1beta1.DefaultQueue, err)
	}
}

// freeAddr returns a loopback address with a port free at the time of the call.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String()
}
