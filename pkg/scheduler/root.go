package scheduler

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	kubeschedulerconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/queue-scheduler/queue-scheduler/apis/config"
	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/embedded"
	"github.com/queue-scheduler/queue-scheduler/pkg/gangs"
	"github.com/queue-scheduler/queue-scheduler/pkg/history"
	"github.com/queue-scheduler/queue-scheduler/pkg/queueclient"
)

// Root is the composition root of one scheduler: it builds the scheduler's accounting once, on the
// first ask, from the scheduler's API server and informer factory, and hands it to the plugins
// (through the registry's factory closures), the controller and the webhook. Nothing is kept
// process-wide: two schedulers of one process (tests, benchmarks) have two roots, and a root asked
// on behalf of a new informer factory (scheduler_perf builds a scheduler per workload from one
// registry) builds a new accounting for it.
type Root struct {
	// takes says which other gang APIs' PodGroups the accounting takes as gangs.
	takes func(schedulingv1beta1.GangSource) bool
	// history says how the accounting remembers usage (QueueState's fairSharing).
	history history.Settings

	mu   sync.Mutex
	kube informers.SharedInformerFactory
	acct *accounting.Accounting
	// attempts are the gangs' reclaims under way on acct: Reclaim starts and ends them, Gang reads
	// them.
	attempts *gangs.Attempts
	// embedded says whether the controller and webhook run on acct.
	embedded bool
}

// NewRoot returns a root that has built nothing yet, whose accounting takes the PodGroups of the
// gang APIs takes says (nil: all of them).
func NewRoot(takes func(schedulingv1beta1.GangSource) bool) *Root {
	return &Root{takes: takes}
}

// NewRootFor returns the root of a scheduler run from configFile ("" for the defaults): its
// accounting takes the gang APIs the QueueState args of the first profile that has some take, as
// the controller and the webhook do, so that every part reads a pod's gang by one rule.
func NewRootFor(configFile string) (*Root, error) {
	var profiles []kubeschedulerconfig.KubeSchedulerProfile
	if configFile != "" {
		cfg, err := options.LoadConfigFromFile(klog.Background(), configFile)
		if err != nil {
			return nil, err
		}
		profiles = cfg.Profiles
	}
	args, err := config.Decode(queueStateArgs(profiles), config.DefaultNamespace())
	if err != nil {
		return nil, err
	}
	r := NewRoot(args.TakesGangsOf)
	r.history = HistorySettings(args.FairSharing)
	return r, nil
}

// HistorySettings are the usage history's settings the fairSharing args ask for.
func HistorySettings(f config.FairSharingArgs) history.Settings {
	s := history.Settings{ResetPeriod: f.UsageResetPeriod.Duration, Factor: f.UsageFactor}
	if f.UsageHalfLife != nil {
		s.HalfLife = f.UsageHalfLife.Duration
	}
	if f.EntryCharge != nil {
		s.EntryCharge = f.EntryCharge.Duration
	}
	return s
}

// Accounting returns the accounting of the scheduler whose informer factory is kube, building and
// syncing it on the first ask; ctx bounds its life (the scheduler's).
func (r *Root) Accounting(ctx context.Context, kubeConfig *rest.Config, kube informers.SharedInformerFactory) (*accounting.Accounting, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.accountingLocked(ctx, kubeConfig, kube)
}

func (r *Root) accountingLocked(ctx context.Context, kubeConfig *rest.Config, kube informers.SharedInformerFactory) (*accounting.Accounting, error) {
	if r.acct != nil && r.kube == kube {
		return r.acct, nil
	}
	client, err := queueclient.New(kubeConfig)
	if err != nil {
		return nil, fmt.Errorf("queue-scheduler client: %w", err)
	}
	acct, err := accounting.Start(ctx, client, kube, accounting.Config{Takes: r.takes, History: r.history})
	if err != nil {
		return nil, err
	}
	r.kube, r.acct, r.attempts, r.embedded = kube, acct, gangs.NewAttempts(acct.Clock()), false
	return acct, nil
}

// StartEmbedded starts the webhook server and the controller on the accounting of the scheduler
// whose informer factory is kube, once for that accounting.
func (r *Root) StartEmbedded(ctx context.Context, kube informers.SharedInformerFactory, cfg embedded.Config) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	acct, err := r.accountingLocked(ctx, cfg.KubeConfig, kube)
	if err != nil || r.embedded {
		return err
	}
	if err := embedded.Start(ctx, cfg, acct); err != nil {
		return err
	}
	r.embedded = true
	return nil
}

// pluginNew is how a queue-scheduler plugin is built: the framework's arguments and the scheduler's
// accounting.
type pluginNew func(context.Context, runtime.Object, fwk.Handle, *accounting.Accounting) (fwk.Plugin, error)

// factory is the framework's factory of a plugin, which hands it the scheduler's accounting.
func (r *Root) factory(newPlugin pluginNew) frameworkruntime.PluginFactory {
	return r.gangFactory(func(ctx context.Context, obj runtime.Object, h fwk.Handle, acct *accounting.Accounting, _ *gangs.Attempts) (fwk.Plugin, error) {
		return newPlugin(ctx, obj, h, acct)
	})
}

// gangPluginNew is how Gang and Reclaim are built: the framework's arguments, the scheduler's
// accounting, and the gangs' reclaims under way, which Reclaim starts and Gang reads.
type gangPluginNew func(context.Context, runtime.Object, fwk.Handle, *accounting.Accounting, *gangs.Attempts) (fwk.Plugin, error)

// gangFactory is the framework's factory of a plugin, which hands it the scheduler's accounting
// and the gangs' reclaims under way on it.
func (r *Root) gangFactory(newPlugin gangPluginNew) frameworkruntime.PluginFactory {
	return func(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		r.mu.Lock()
		acct, err := r.accountingLocked(ctx, h.KubeConfig(), h.SharedInformerFactory())
		attempts := r.attempts
		r.mu.Unlock()
		if err != nil {
			return nil, err
		}
		return newPlugin(ctx, obj, h, acct, attempts)
	}
}
