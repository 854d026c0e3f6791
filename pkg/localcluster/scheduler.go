package localcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	utilcompatibility "k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/events"
	"k8s.io/component-base/compatibility"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	schedulerserverconfig "k8s.io/kubernetes/cmd/kube-scheduler/app/config"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	kubescheduler "k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/utils/clock"
	"sigs.k8s.io/yaml"

	"github.com/queue-scheduler/queue-scheduler/apis/config"
	"github.com/queue-scheduler/queue-scheduler/pkg/scheduler"
	"github.com/queue-scheduler/queue-scheduler/plugins/queuestate"
)

// SchedulerClientQPS and SchedulerClientBurst lift the scheduler's API client limits so that on a
// local cluster the scheduler, not its client, is what is measured.
const (
	SchedulerClientQPS   = 5000
	SchedulerClientBurst = 5000
)

// runningScheduler is a queue-scheduler running inside this process.
type runningScheduler struct {
	cancel context.CancelFunc
	done   chan struct{}
	// informers are the scheduler's own, as its plugins read them.
	informers informers.SharedInformerFactory
}

// startScheduler runs the queue-scheduler from the KubeSchedulerConfiguration profile opts give,
// pointed at kubeconfig, with leader election off and no serving port: the same code and profile as
// the binary, with the plugins, queue clock and known runtimes opts add.
func startScheduler(ctx context.Context, kubeconfig, dir string, serving Serving, opts Options) (*runningScheduler, error) {
	configPath, err := WriteSchedulerConfig(opts.SchedulerProfile, kubeconfig, filepath.Join(dir, "scheduler-config.yaml"), serving)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	root, err := scheduler.NewRootFor(configPath)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("read queue-scheduler's configuration: %w", err)
	}
	cc, sched, err := setUpScheduler(ctx, configPath, append(scheduler.PluginOptions(root), opts.ExtraPlugins...), opts.QueueClock)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("set up queue-scheduler: %w", err)
	}
	if err := scheduler.StartEmbedded(ctx, cc, root, opts.KnownRuntime); err != nil {
		cancel()
		return nil, fmt.Errorf("start the queue controller and webhook: %w", err)
	}
	return run(ctx, cancel, cc, sched), nil
}

// setUpScheduler builds a scheduler from a configuration file, with a component registry of its own,
// as each scheduler started in this process would otherwise share one; its scheduling queue runs on
// queueClock when it is not nil.
func setUpScheduler(ctx context.Context, configPath string, plugins []app.Option, queueClock clock.WithTicker) (*schedulerserverconfig.CompletedConfig, *kubescheduler.Scheduler, error) {
	registry := compatibility.NewComponentGlobalsRegistry()
	effective := utilcompatibility.DefaultBuildEffectiveVersion()
	if err := registry.Register(compatibility.DefaultKubeComponent, effective, utilfeature.DefaultMutableFeatureGate); err != nil {
		return nil, nil, err
	}
	opts := options.NewOptionsWithComponentGlobalsRegistry(registry)
	opts.ConfigFile = configPath
	opts.SecureServing.BindPort = 0
	scheduler.WithoutMetricsAllowList(opts)
	if queueClock == nil {
		return app.Setup(ctx, opts, plugins...)
	}
	return setUpOnClock(ctx, opts, plugins, queueClock)
}

// setUpOnClock does what kube-scheduler's app.Setup does, with the scheduling queue on queueClock,
// which app.Setup does not offer.
func setUpOnClock(ctx context.Context, opts *options.Options, plugins []app.Option, queueClock clock.WithTicker) (*schedulerserverconfig.CompletedConfig, *kubescheduler.Scheduler, error) {
	cfg, err := latest.Default()
	if err != nil {
		return nil, nil, err
	}
	opts.ComponentConfig = cfg
	if errs := opts.Validate(); len(errs) > 0 {
		return nil, nil, utilerrors.NewAggregate(errs)
	}
	c, err := opts.Config(ctx)
	if err != nil {
		return nil, nil, err
	}
	cc := c.Complete()
	outOfTree := make(frameworkruntime.Registry)
	for _, option := range plugins {
		if err := option(outOfTree); err != nil {
			return nil, nil, err
		}
	}
	kc := cc.ComponentConfig
	sched, err := kubescheduler.New(ctx, cc.Client, cc.InformerFactory, cc.DynInformerFactory,
		func(name string) events.EventRecorderLogger { return cc.EventBroadcaster.NewRecorder(name) },
		kubescheduler.WithComponentConfigVersion(kc.APIVersion), kubescheduler.WithKubeConfig(cc.KubeConfig),
		kubescheduler.WithProfiles(kc.Profiles...), kubescheduler.WithPercentageOfNodesToScore(kc.PercentageOfNodesToScore),
		kubescheduler.WithFrameworkOutOfTreeRegistry(outOfTree), kubescheduler.WithPodMaxBackoffSeconds(kc.PodMaxBackoffSeconds),
		kubescheduler.WithPodInitialBackoffSeconds(kc.PodInitialBackoffSeconds),
		kubescheduler.WithPodMaxInUnschedulablePodsDuration(cc.PodMaxInUnschedulablePodsDuration),
		kubescheduler.WithExtenders(kc.Extenders...), kubescheduler.WithParallelism(kc.Parallelism),
		kubescheduler.WithClock(queueClock))
	if err != nil {
		return nil, nil, err
	}
	return &cc, sched, nil
}

// limitProfile is the least a profile can do and still place pods by their requests; it keeps
// SchedulingGates, without which a gated pod would be tried (and its binding refused) until released.
const limitProfile = `- schedulerName: %s
  plugins:
    multiPoint:
      enabled: [{name: PrioritySort}, {name: SchedulingGates}, {name: NodeResourcesFit}, {name: DefaultBinder}]
      disabled: [{name: "*"}]
`

// startVanillaScheduler runs the upstream kube-scheduler with its default profile under
// schedulerName, and with limitName also the minimal limitProfile, beside the queue-scheduler, so
// that all can be measured on one cluster. It runs the scheduler itself rather than the command,
// whose debugging endpoints exist once per process.
func startVanillaScheduler(ctx context.Context, schedulerName, limitName, kubeconfig, dir string) (*runningScheduler, error) {
	profile := fmt.Appendf(nil, "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: %s\n", schedulerName)
	if limitName != "" {
		profile = fmt.Appendf(profile, limitProfile, limitName)
	}
	configPath, err := WriteSchedulerConfig(profile, kubeconfig, filepath.Join(dir, "vanilla-scheduler-config.yaml"), Serving{})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	cc, sched, err := setUpScheduler(ctx, configPath, nil, nil)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("set up the vanilla kube-scheduler: %w", err)
	}
	return run(ctx, cancel, cc, sched), nil
}

// run does what kube-scheduler's app.Run does with leader election off and no serving port, except
// registering the process-wide configz endpoint, so that several schedulers (of several local
// clusters) can run in one process: events, informers, cache sync, then scheduling.
func run(ctx context.Context, cancel context.CancelFunc, cc *schedulerserverconfig.CompletedConfig, sched *kubescheduler.Scheduler) *runningScheduler {
	s := &runningScheduler{cancel: cancel, done: make(chan struct{}), informers: cc.InformerFactory}
	cc.EventBroadcaster.StartRecordingToSink(ctx.Done())
	cc.InformerFactory.Start(ctx.Done())
	if cc.DynInformerFactory != nil {
		cc.DynInformerFactory.Start(ctx.Done())
	}
	go func() {
		defer close(s.done)
		defer cc.EventBroadcaster.Shutdown()
		cc.InformerFactory.WaitForCacheSync(ctx.Done())
		if cc.DynInformerFactory != nil {
			cc.DynInformerFactory.WaitForCacheSync(ctx.Done())
		}
		if err := sched.WaitForHandlersSync(ctx); err != nil && ctx.Err() == nil {
			klog.FromContext(ctx).Error(err, "scheduler event handlers not synchronized")
		}
		sched.Run(ctx)
	}()
	return s
}

// stop cancels the scheduler and waits for it to return.
func (s *runningScheduler) stop() {
	s.cancel()
	<-s.done
}

// Serving says where the servers of a scheduler that WriteSchedulerConfig configures listen, on
// loopback addresses.
type Serving struct {
	// Webhook is the admission webhook's address; "" leaves the profile's as they are.
	Webhook string
	// Visibility is the live view's address, which serves the webhook's certificate; "" turns the
	// view off.
	Visibility string
}

// WriteSchedulerConfig writes the profile to path with the local cluster's client connection filled
// in, and, unless serving.Webhook is empty, the webhook and live view servers of every profile's
// QueueState plugin serving where serving says.
func WriteSchedulerConfig(profile []byte, kubeconfig, path string, serving Serving) (string, error) {
	cfg := map[string]any{}
	if err := yaml.Unmarshal(profile, &cfg); err != nil {
		return "", fmt.Errorf("scheduler profile: %w", err)
	}
	profiles, _ := cfg["profiles"].([]any)
	for _, p := range profiles {
		if p, ok := p.(map[string]any); ok && serving.Webhook != "" {
			setServingArgs(p, serving)
		}
	}
	cfg["clientConnection"] = map[string]any{
		"kubeconfig": kubeconfig,
		"qps":        SchedulerClientQPS,
		"burst":      SchedulerClientBurst,
	}
	cfg["leaderElection"] = map[string]any{"leaderElect": false}
	data, err := yaml.Marshal(cfg)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return "", fmt.Errorf("write scheduler config: %w", err)
	}
	return path, nil
}

// setServingArgs points the QueueState plugin's webhook and live view at loopback addresses, with a
// certificate for the loopback address and for the view's Service, which the API server's
// aggregation layer verifies the view by.
func setServingArgs(profile map[string]any, serving Serving) {
	var dnsNames []any
	for _, name := range config.ServiceDNSNames(config.DefaultVisibilityServiceName, config.DefaultNamespace()) {
		dnsNames = append(dnsNames, name)
	}
	webhook := map[string]any{"bindAddress": serving.Webhook, "ipAddresses": []any{"127.0.0.1"}, "dnsNames": dnsNames}
	view := map[string]any{"bindAddress": serving.Visibility}
	if serving.Visibility == "" {
		view = map[string]any{"disabled": true}
	}
	pluginConfig, _ := profile["pluginConfig"].([]any)
	for _, pc := range pluginConfig {
		if pc, ok := pc.(map[string]any); ok && pc["name"] == queuestate.Name {
			args, _ := pc["args"].(map[string]any)
			if args == nil {
				args = map[string]any{}
				pc["args"] = args
			}
			args["webhook"], args["visibility"] = webhook, view
			return
		}
	}
	profile["pluginConfig"] = append(pluginConfig, map[string]any{
		"name": queuestate.Name, "args": map[string]any{"webhook": webhook, "visibility": view},
	})
}
