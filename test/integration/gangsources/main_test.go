// Package gangsources tests the gangs of the other gang APIs — scheduler-plugins' and Volcano's
// PodGroups — on a control plane of their own, which starts without their CRDs (a cluster without
// them runs unchanged) and installs them while the scheduler runs. The cluster is tight: 2 nodes of
// 2 CPUs. The Gang plugin's default timeout is 5 s, as an administrator sets it for Volcano's
// PodGroups, which carry none.
package gangsources

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	spclient "sigs.k8s.io/scheduler-plugins/pkg/generated/clientset/versioned"
	vcclient "volcano.sh/apis/pkg/client/clientset/versioned"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/manifests"
	"github.com/queue-scheduler/queue-scheduler/pkg/localcluster"
	"github.com/queue-scheduler/queue-scheduler/pkg/queueclient"
	"github.com/queue-scheduler/queue-scheduler/test/clustertest"
	"github.com/queue-scheduler/queue-scheduler/test/gangcrds"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

var (
	cluster *localcluster.Cluster
	sp      spclient.Interface
	vc      vcclient.Interface
)

const (
	nodes   = 2
	nodeCPU = "2"
	settle  = 2 * time.Minute
	// defaultTimeout is the Gang plugin's defaultScheduleTimeoutSeconds in this package's profile.
	defaultTimeout = 5
)

// profile is the shipped profile with the Gang plugin's default timeout set.
func profile() []byte {
	return append(append([]byte(nil), manifests.SchedulerConfig...), fmt.Sprintf(`  pluginConfig:
  - name: Gang
    args:
      defaultScheduleTimeoutSeconds: %d
`, defaultTimeout)...)
}

func TestMain(m *testing.M) {
	opts := localcluster.Options{SchedulerProfile: profile()}
	os.Exit(clustertest.RunWithCluster(m, opts, func(ctx context.Context, c *localcluster.Cluster) error {
		for i := range nodes {
			if _, err := c.Kube.CoreV1().Nodes().Create(ctx, util.MakeNode(fmt.Sprintf("node-%d", i), nodeCPU, "8Gi"), metav1.CreateOptions{}); err != nil {
				return err
			}
		}
		cluster, sp, vc = c, spclient.NewForConfigOrDie(queueclient.JSONConfig(c.Config)), vcclient.NewForConfigOrDie(queueclient.JSONConfig(c.Config))
		return nil
	}))
}

var installOnce sync.Once

// installGangCRDs installs scheduler-plugins' and Volcano's PodGroup CRDs, once, while the scheduler
// runs.
func installGangCRDs(t *testing.T) {
	t.Helper()
	var err error
	installOnce.Do(func() {
		err = localcluster.InstallCRDsFrom(context.Background(), cluster.Config, gangcrds.FS, "*.yaml")
	})
	if err != nil {
		t.Fatalf("install the gang CRDs: %v", err)
	}
}

// newNamespace creates a namespace opted in to queue-scheduler whose work goes to queue, and
// deletes its PodGroups of every API and its pods after the test, so that no group a test leaves
// waiting or admitted asks for room in the tests after it.
func newNamespace(t *testing.T, name, queue string) string {
	t.Helper()
	name = clustertest.Named(t, name)
	ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name,
		Labels:      map[string]string{schedulingv1beta1.ManagedLabel: "true"},
		Annotations: map[string]string{schedulingv1beta1.QueueAnnotation: queue}}}
	if _, err := cluster.Kube.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		deletePodGroups(t, name)
		if err := cluster.Kube.CoreV1().Pods(name).DeleteCollection(context.Background(), metav1.DeleteOptions{GracePeriodSeconds: new(int64)},
			metav1.ListOptions{}); err != nil {
			t.Errorf("delete pods: %v", err)
		}
		waitNoPods(t, name)
	})
	return name
}

// deletePodGroups deletes the namespace's PodGroups: the other APIs' first (their mirrors go with
// them), then queue-scheduler's. An API whose CRD is not installed yet has none.
func deletePodGroups(t *testing.T, namespace string) {
	t.Helper()
	ctx, all := context.Background(), metav1.ListOptions{}
	for api, deleteAll := range map[string]func() error{
		"scheduler-plugins": func() error {
			return sp.SchedulingV1alpha1().PodGroups(namespace).DeleteCollection(ctx, metav1.DeleteOptions{}, all)
		},
		"volcano": func() error {
			return vc.SchedulingV1beta1().PodGroups(namespace).DeleteCollection(ctx, metav1.DeleteOptions{}, all)
		},
	} {
		if err := deleteAll(); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete the %s PodGroups of %s: %v", api, namespace, err)
		}
	}
	if err := cluster.Queues.SchedulingV1beta1().PodGroups(namespace).DeleteCollection(ctx, metav1.DeleteOptions{}, all); err != nil {
		t.Errorf("delete the PodGroups of %s: %v", namespace, err)
	}
}
