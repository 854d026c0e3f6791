// Package install tests the release manifest as a platform team uses it: manifests/install.yaml is
// applied server-side to an API server that authorizes with RBAC and audits every request of the
// queue-scheduler's ServiceAccount, and the queue-scheduler binary runs with that ServiceAccount's
// token. It must schedule, write status, serve its webhook and execute Commands without one forbidden
// request, and every rule the manifest grants must be one it uses.
package install

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/queue-scheduler/queue-scheduler/pkg/localcluster"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// serviceAccount is the identity the shipped Deployment runs as.
const (
	namespace      = "queue-scheduler-system"
	serviceAccount = "queue-scheduler"
	userName       = "system:serviceaccount:" + namespace + ":" + serviceAccount
)

// auditPolicy records every request of the queue-scheduler's ServiceAccount at Metadata level (verb,
// resource, name, response code) and nothing else.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  users: ["` + userName + `"]
- level: None
`

var (
	cluster  *localcluster.Cluster
	auditLog string
)

func TestMain(m *testing.M) {
	flag.Parse()
	if os.Getenv("QS_TEST_LOGS") == "" {
		klog.SetLogger(logr.Discard())
	}
	os.Exit(runWithRBAC(m))
}

// runWithRBAC starts a control plane with RBAC on and the audit log, without the queue-scheduler
// CRDs (install.yaml carries them), runs the tests and stops it.
func runWithRBAC(m *testing.M) int {
	dir, err := os.MkdirTemp("", "install")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	policy := filepath.Join(dir, "audit-policy.yaml")
	auditLog = filepath.Join(dir, "audit.log")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cluster, err = localcluster.Start(context.Background(), localcluster.Options{
		WithoutScheduler: true,
		WithoutCRDs:      true,
		APIServerFlags: []string{
			"--authorization-mode=Node,RBAC",
			"--audit-policy-file=" + policy,
			"--audit-log-path=" + auditLog,
			"--audit-log-format=json",
			"--audit-log-mode=blocking",
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start local cluster:", err)
		return 1
	}
	defer cluster.Stop()
	return m.Run()
}

// TestInstallManifestWithRBAC applies install.yaml, runs the binary as the shipped ServiceAccount and
// drives every path that needs a permission: the default queue, admission, binding, queue status,
// reclaim through the Eviction API, a Command, a held pod's condition, a gang, a QueueUnit and its
// Job. No request of the ServiceAccount may be forbidden, and every rule of the shipped roles must
// have been used, but for those the scenario cannot reach (named in unreachedRules).
func TestInstallManifestWithRBAC(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	binary := buildScheduler(t, dir)
	install := readInstallManifest(t)
	webhookAddr := freeAddr(t)
	install.pointWebhooksAt("https://" + webhookAddr)
	applyServerSide(ctx, t, install.objects)
	grants := install.grants(t)
	waitGranted(ctx, t, grants)

	kubeconfig := serviceAccountKubeconfig(ctx, t, dir)
	configPath := install.schedulerConfig(t, dir, kubeconfig, webhookAddr)
	healthAddr := freeAddr(t)
	stop := runScheduler(t, dir, binary, configPath, kubeconfig, healthAddr)
	waitForDefaultQueue(ctx, t)

	t.Run("healthz", func(t *testing.T) { wantHealthy(t, healthAddr) })
	runScenario(ctx, t)

	events := readAudit(t)
	if forbidden := events.forbidden(); len(forbidden) > 0 {
		t.Errorf("%d requests of %s were forbidden:\n%s", len(forbidden), userName, forbidden)
	}
	for _, unused := range unusedGrants(grants, events) {
		t.Errorf("granted but not used: %s", unused)
	}

	stop()
	t.Run("while no replica runs the webhooks refuse what they cover", func(t *testing.T) { whileDown(ctx, t) })
}

// whileDown checks what docs/operations.md says the webhooks' failurePolicy blocks while no replica
// serves them, and what it leaves alone.
func whileDown(ctx context.Context, t *testing.T) {
	refused := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), "failed calling webhook") {
			t.Errorf("%s while the scheduler is down: %v, want a refusal by the webhook", what, err)
		}
	}
	_, err := cluster.Queues.SchedulingV1beta1().Queues().Create(ctx, util.MakeQueue("late").Obj(), metav1.CreateOptions{})
	refused("a new queue", err)
	_, err = cluster.Kube.CoreV1().Pods("team-a").Create(ctx, cpuPod("team-a", "late", "a"), metav1.CreateOptions{})
	refused("a pod for queue-scheduler", err)
	other := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "default-scheduler"},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
	}
	if _, err := cluster.Kube.CoreV1().Pods("team-a").Create(ctx, other, metav1.CreateOptions{}); err != nil {
		t.Errorf("a pod of the default scheduler while queue-scheduler is down: %v", err)
	}
}

// wantHealthy reads /healthz from the scheduler's secure port, which it serves to anyone.
func wantHealthy(t *testing.T, addr string) {
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // a self-signed serving certificate
	}}
	resp, err := client.Get("https://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz: %s", resp.Status)
	}
}
