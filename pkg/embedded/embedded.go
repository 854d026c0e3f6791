// Package embedded starts what runs beside the scheduling framework: the admission webhook server and
// the live view's server on every replica, and the queue controller on the leader. The composition
// root (pkg/scheduler) starts them once per scheduler, once it is set up, whatever plugins its
// profiles enable.
package embedded

import (
	"context"
	"fmt"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	aggregatorclient "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"
	spclient "sigs.k8s.io/scheduler-plugins/pkg/generated/clientset/versioned"
	vcclient "volcano.sh/apis/pkg/client/clientset/versioned"

	"github.com/queue-scheduler/queue-scheduler/apis/config"
	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/controller"
	"github.com/queue-scheduler/queue-scheduler/pkg/gangsource"
	"github.com/queue-scheduler/queue-scheduler/pkg/queueclient"
	"github.com/queue-scheduler/queue-scheduler/pkg/readmodel"
	"github.com/queue-scheduler/queue-scheduler/pkg/visibility"
	"github.com/queue-scheduler/queue-scheduler/pkg/webhook"
)

// Config is what the servers and the controller beside the framework are started with.
type Config struct {
	// KubeConfig and Client reach the API server.
	KubeConfig *rest.Config
	Client     kubernetes.Interface
	// Kubeconfig is the file KubeConfig was read from, for the live view's delegated
	// authentication and authorization; "" for the in-cluster configuration.
	Kubeconfig string
	// Args are the QueueState args.
	Args *config.QueueStateArgs
	// Lease is the controller's lease.
	Lease controller.LeaderElection
	// KnownRuntime tells the forecast pods' runtimes ahead (readmodel.ForecastSettings); nil for
	// none.
	KnownRuntime readmodel.KnownRuntimes
}

// Start starts the webhook server (unless disabled), the controller, holding the lease, and the live
// view's server (unless disabled), until ctx ends. The webhook comes first: the controller's first
// writes go through it.
func Start(ctx context.Context, cfg Config, acct *accounting.Accounting) error {
	kubeConfig, client, args := cfg.KubeConfig, cfg.Client, cfg.Args
	var hook *webhook.Server
	if !args.Webhook.Disabled {
		var apiServices aggregatorclient.Interface
		if args.Serves() {
			var err error
			if apiServices, err = aggregatorclient.NewForConfig(kubeConfig); err != nil {
				return fmt.Errorf("aggregator client: %w", err)
			}
		}
		var err error
		if hook, err = webhook.Start(ctx, client, apiServices, acct, args); err != nil {
			return err
		}
	}
	dyn, err := dynamic.NewForConfig(kubeConfig)
	if err != nil {
		return fmt.Errorf("dynamic client: %w", err)
	}
	meta, err := metadata.NewForConfig(kubeConfig)
	if err != nil {
		return fmt.Errorf("metadata client: %w", err)
	}
	gangs, err := gangSources(kubeConfig, client, args)
	if err != nil {
		return err
	}
	c, err := controller.New(ctx, client, dyn, meta, acct, gangs, controller.StatusPacing{
		Interval: args.Controller.StatusWriteInterval.Duration, PerSecond: int(args.Controller.StatusWritesPerSecond),
		Checkpoint: args.FairSharing.CheckpointInterval.Duration},
		readmodel.ForecastSettings{Resolution: args.Controller.ForecastResolution.Duration, DefaultRuntime: args.Controller.ForecastDefaultRuntime.Duration,
			Interval: args.Controller.ForecastInterval.Duration, KnownRuntime: cfg.KnownRuntime})
	if err != nil {
		return err
	}
	go func() {
		if err := c.Run(ctx, cfg.Lease); err != nil {
			utilruntime.HandleErrorWithContext(ctx, err, "Queue controller stopped")
		}
	}()
	if !args.Serves() {
		return nil
	}
	// The view is optional: a replica that cannot serve it (its delegated authentication could not
	// read the API server's client CAs, say) schedules all the same, and says why.
	if err := visibility.Start(ctx, visibility.Options{BindAddress: args.Visibility.BindAddress, Cert: hook.ServingCert(),
		Kubeconfig: cfg.Kubeconfig, Source: c.View(), Synced: acct.Synced}); err != nil {
		utilruntime.HandleErrorWithContext(ctx, err, "The live view is not served by this replica")
	}
	return nil
}

// gangSources are the other gang APIs args take, on their generated clients.
func gangSources(kubeConfig *rest.Config, client kubernetes.Interface, args *config.QueueStateArgs) ([]gangsource.Source, error) {
	kubeConfig = queueclient.JSONConfig(kubeConfig)
	var sources []gangsource.Source
	if args.TakesGangsOf(schedulingv1beta1.GangSourceSchedulerPlugins) {
		sp, err := spclient.NewForConfig(kubeConfig)
		if err != nil {
			return nil, fmt.Errorf("scheduler-plugins client: %w", err)
		}
		sources = append(sources, gangsource.NewSchedulerPlugins(sp))
	}
	if args.TakesGangsOf(schedulingv1beta1.GangSourceVolcano) {
		vc, err := vcclient.NewForConfig(kubeConfig)
		if err != nil {
			return nil, fmt.Errorf("volcano client: %w", err)
		}
		sources = append(sources, gangsource.NewVolcano(vc))
	}
	if args.TakesGangsOf(schedulingv1beta1.GangSourceKubernetes) {
		sources = append(sources, gangsource.NewKubernetes(client))
	}
	return sources, nil
}
