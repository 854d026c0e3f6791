// Package localcluster runs a whole Kubernetes control plane for queue-scheduler inside one process:
// an embedded etcd, the upstream kube-apiserver, the queue-scheduler CRDs and the queue-scheduler
// itself from its real profile. The integration tests, the benchmarks and queuesim all use it, so
// there is one way to stand the system up.
package localcluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	aggregatorclient "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	"k8s.io/utils/clock"

	"github.com/queue-scheduler/queue-scheduler/apis/config"
	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/manifests"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned"
	"github.com/queue-scheduler/queue-scheduler/pkg/queueclient"
	"github.com/queue-scheduler/queue-scheduler/pkg/readmodel"
	"github.com/queue-scheduler/queue-scheduler/pkg/visibility"
	"github.com/queue-scheduler/queue-scheduler/pkg/webhook"
)

// Options shape a local cluster.
type Options struct {
	// Dir keeps etcd's data, certificates and the kubeconfig; a temporary directory when empty.
	Dir string
	// SchedulerProfile is the KubeSchedulerConfiguration to run; manifests/scheduler-config.yaml when nil.
	SchedulerProfile []byte
	// WithoutScheduler starts the control plane only.
	WithoutScheduler bool
	// WithoutCRDs leaves the queue-scheduler CRDs to the caller (a test of the install manifests);
	// only with WithoutScheduler.
	WithoutCRDs bool
	// APIServerFlags are added to the kube-apiserver's flags.
	APIServerFlags []string
	// RBAC makes the API server authorize with RBAC (Node,RBAC), as a real one does, and installs the
	// shipped ClusterRoles with kube-controller-manager's aggregation controller, which folds them into
	// the namespace roles admin, edit and view. Config keeps full rights (system:masters).
	RBAC bool
	// ExtraPlugins registers more out-of-tree plugins beside queue-scheduler's.
	ExtraPlugins []app.Option
	// QueueClock is the clock of the queue-scheduler's scheduling queue: the pods' backoffs, when
	// their backoffs are flushed, how long an unschedulable pod may wait before it is tried again
	// (kube-scheduler looks for those every 30 real seconds). A simulation that runs faster than
	// real time passes its own, so that the scheduler backs off at the pace it has on a real
	// cluster, in simulated time; the real clock when nil.
	QueueClock clock.WithTicker
	// KnownRuntime, when set, tells the forecast each pod's runtime ahead of its run, in place of
	// the runtimes it learns (readmodel.ForecastSettings): a simulation, which knows them, measures
	// the forecast's model apart from its estimates.
	KnownRuntime readmodel.KnownRuntimes
	// VanillaSchedulerName, when set, also runs the upstream kube-scheduler with its default
	// profile under this schedulerName, for comparisons on the same cluster.
	VanillaSchedulerName string
	// LimitSchedulerName, when set with VanillaSchedulerName, adds to that scheduler a minimal
	// profile under this name (PrioritySort, SchedulingGates, NodeResourcesFit, DefaultBinder): the
	// most the API server and the machine allow, for benchmarks to compare against.
	LimitSchedulerName string
}

// Cluster is a running local cluster.
type Cluster struct {
	// Config reaches the API server with full rights.
	Config *rest.Config
	// Kubeconfig is the path of a kubeconfig file for Config.
	Kubeconfig string
	// Kube is a client of the core API.
	Kube kubernetes.Interface
	// Queues is a client of the queue-scheduler API.
	Queues versioned.Interface

	dir       string
	ownDir    bool
	etcd      *embed.Etcd
	apiServer *apiServer
	scheduler *runningScheduler
	vanilla   *runningScheduler
	// restart is how the queue-scheduler was started, for RestartScheduler.
	restart func(context.Context) (*runningScheduler, error)
	// stopStandIns stops the stand-ins for other components: the kubelets' part in pod deletion,
	// and with RBAC the role aggregation of kube-controller-manager.
	stopStandIns context.CancelFunc
}

// Start stands up a local cluster. The caller must Stop it.
func Start(ctx context.Context, opts Options) (c *Cluster, err error) {
	c = &Cluster{dir: opts.Dir}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	if c.dir == "" {
		if c.dir, err = os.MkdirTemp("", "localcluster"); err != nil {
			return nil, err
		}
		c.ownDir = true
	}
	etcd, etcdURL, err := startEtcd(c.dir)
	if err != nil {
		return c, err
	}
	c.etcd = etcd
	flags := opts.APIServerFlags
	if opts.RBAC {
		flags = append(slices.Clone(flags), "--authorization-mode=Node,RBAC")
	}
	if c.apiServer, err = startAPIServer(etcdURL, flags); err != nil {
		return c, err
	}
	if opts.WithoutCRDs && !opts.WithoutScheduler {
		return c, fmt.Errorf("WithoutCRDs needs WithoutScheduler: the scheduler needs the CRDs")
	}
	if err := c.connect(ctx, !opts.WithoutCRDs); err != nil {
		return c, err
	}
	standIns, stopStandIns := context.WithCancel(context.Background())
	c.stopStandIns = stopStandIns
	if err := startReaper(standIns, c.Kube); err != nil {
		return c, err
	}
	if opts.RBAC {
		if err := startRoles(standIns, c.Kube); err != nil {
			return c, err
		}
	}
	if opts.WithoutScheduler {
		return c, nil
	}
	if opts.SchedulerProfile == nil {
		opts.SchedulerProfile = manifests.SchedulerConfig
	}
	serving, err := c.registerServing(ctx)
	if err != nil {
		return c, err
	}
	c.restart = func(ctx context.Context) (*runningScheduler, error) {
		return startScheduler(ctx, c.Kubeconfig, c.dir, serving, opts)
	}
	if err := c.startQueueScheduler(ctx); err != nil {
		return c, err
	}
	if opts.VanillaSchedulerName != "" {
		err = labelled(ctx, "kube-scheduler", func(ctx context.Context) (err error) {
			c.vanilla, err = startVanillaScheduler(ctx, opts.VanillaSchedulerName, opts.LimitSchedulerName, c.Kubeconfig, c.dir)
			return err
		})
		if err != nil {
			return c, err
		}
	}
	return c, c.waitReady(ctx)
}

// startQueueScheduler starts the queue-scheduler as Start was asked to.
func (c *Cluster) startQueueScheduler(ctx context.Context) error {
	return labelled(ctx, "queue-scheduler", func(ctx context.Context) (err error) {
		c.scheduler, err = c.restart(ctx)
		return err
	})
}

// RestartScheduler stops the queue-scheduler and starts a new one from the same configuration, as a
// restarted process would: nothing in memory passes from the one to the other. It returns once the
// new one serves.
func (c *Cluster) RestartScheduler(ctx context.Context) error {
	if c.scheduler == nil {
		return fmt.Errorf("the local cluster runs no queue-scheduler")
	}
	c.scheduler.stop()
	c.scheduler = nil
	if err := c.startQueueScheduler(ctx); err != nil {
		return err
	}
	return c.waitReady(ctx)
}

// labelled runs start with the profiler label component=name, which every goroutine it starts
// inherits, so that a CPU profile of a process running several schedulers tells them apart
// (go tool pprof -tagfocus component=queue-scheduler).
func labelled(ctx context.Context, name string, start func(context.Context) error) error {
	var err error
	pprof.Do(ctx, pprof.Labels("component", name), func(ctx context.Context) { err = start(ctx) })
	return err
}

// registerServing picks loopback ports for the scheduler's webhook and live view servers, registers
// the webhook configurations that point the API server at the one, and the APIService that points
// its aggregation layer at the other, through an ExternalName Service for the loopback address. The
// server fills in the CA bundles when it starts.
func (c *Cluster) registerServing(ctx context.Context) (Serving, error) {
	ports, err := freePorts(2)
	if err != nil {
		return Serving{}, err
	}
	serving := Serving{Webhook: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0])),
		Visibility: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1]))}
	clientConfig := webhook.URLClientConfig("https://" + serving.Webhook)
	admission := c.Kube.AdmissionregistrationV1()
	validating := webhook.Configuration(config.DefaultConfigurationName, clientConfig)
	if _, err := admission.ValidatingWebhookConfigurations().Create(ctx, validating, metav1.CreateOptions{}); err != nil {
		return Serving{}, fmt.Errorf("register validating webhook: %w", err)
	}
	mutating := webhook.MutatingConfiguration(config.DefaultConfigurationName, clientConfig)
	if _, err := admission.MutatingWebhookConfigurations().Create(ctx, mutating, metav1.CreateOptions{}); err != nil {
		return Serving{}, fmt.Errorf("register mutating webhook: %w", err)
	}
	return serving, c.registerView(ctx, int32(ports[1]))
}

// registerView registers the live view, served on the loopback port.
func (c *Cluster) registerView(ctx context.Context, port int32) error {
	namespace := config.DefaultNamespace()
	svc := &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: config.DefaultVisibilityServiceName, Namespace: namespace},
		Spec: v1.ServiceSpec{Type: v1.ServiceTypeExternalName, ExternalName: "127.0.0.1"}}
	if _, err := c.Kube.CoreV1().Services(namespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("register the live view's Service: %w", err)
	}
	aggregator, err := aggregatorclient.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	apiService := visibility.APIService(namespace, config.DefaultVisibilityServiceName, port)
	if _, err := aggregator.ApiregistrationV1().APIServices().Create(ctx, apiService, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("register the live view's APIService: %w", err)
	}
	return nil
}

// readyTimeout bounds the wait for the scheduler's controller to lead and create the default queue.
const readyTimeout = time.Minute

// waitReady waits until the embedded controller leads: it has created the default queue.
func (c *Cluster) waitReady(ctx context.Context) error {
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, readyTimeout, true, func(ctx context.Context) (bool, error) {
		_, err := c.Queues.SchedulingV1beta1().Queues().Get(ctx, schedulingv1beta1.DefaultQueue, metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("queue-scheduler did not create queue %q within %s: %w", schedulingv1beta1.DefaultQueue, readyTimeout, err)
	}
	return nil
}

// connect builds the clients, writes the kubeconfig and, with crds, installs the CRDs.
func (c *Cluster) connect(ctx context.Context, crds bool) error {
	c.Config = rest.CopyConfig(c.apiServer.config)
	c.Config.QPS, c.Config.Burst = 1000, 2000
	c.Kubeconfig = filepath.Join(c.dir, "kubeconfig")
	if err := WriteKubeconfig(c.Config, c.Kubeconfig); err != nil {
		return err
	}
	var err error
	if c.Kube, err = kubernetes.NewForConfig(c.Config); err != nil {
		return err
	}
	if c.Queues, err = queueclient.New(c.Config); err != nil {
		return err
	}
	if !crds {
		return nil
	}
	if err := InstallCRDs(ctx, c.Config); err != nil {
		return fmt.Errorf("install CRDs: %w", err)
	}
	return nil
}

// SchedulerInformers returns the queue-scheduler's informers, for a test that must know what the
// scheduler's caches hold; nil when the cluster runs no scheduler.
func (c *Cluster) SchedulerInformers() informers.SharedInformerFactory {
	if c.scheduler == nil {
		return nil
	}
	return c.scheduler.informers
}

// Stop stops the scheduler, the API server and etcd, and removes the directory it made.
func (c *Cluster) Stop() {
	if c.stopStandIns != nil {
		c.stopStandIns()
	}
	if c.vanilla != nil {
		c.vanilla.cancel()
		<-c.vanilla.done
		c.vanilla = nil
	}
	if c.scheduler != nil {
		c.scheduler.stop()
		c.scheduler = nil
	}
	if c.apiServer != nil {
		c.apiServer.stop()
		c.apiServer = nil
	}
	if c.etcd != nil {
		c.etcd.Close()
		c.etcd = nil
	}
	if c.ownDir {
		_ = os.RemoveAll(c.dir)
	}
}
