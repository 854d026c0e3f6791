package scheduler

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	componentbaseconfig "k8s.io/component-base/config"
	"k8s.io/klog/v2"
	schedulerserverconfig "k8s.io/kubernetes/cmd/kube-scheduler/app/config"
	kubeschedulerconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"

	"github.com/queue-scheduler/queue-scheduler/apis/config"
	"github.com/queue-scheduler/queue-scheduler/pkg/controller"
	"github.com/queue-scheduler/queue-scheduler/pkg/embedded"
	"github.com/queue-scheduler/queue-scheduler/pkg/readmodel"
	"github.com/queue-scheduler/queue-scheduler/plugins/queuestate"
)

// StartEmbedded starts the scheduler's admission webhook server and queue controller on the
// accounting root gave its plugins. They are configured by the QueueState args of the first profile
// that has some, else by the defaults: a profile without QueueState still gets both. known tells the
// forecast pods' runtimes ahead (a simulator's; nil on a cluster).
func StartEmbedded(ctx context.Context, cc *schedulerserverconfig.CompletedConfig, root *Root, known readmodel.KnownRuntimes) error {
	args, err := config.Decode(queueStateArgs(cc.ComponentConfig.Profiles), config.DefaultNamespace())
	if err != nil {
		return err
	}
	return root.StartEmbedded(ctx, cc.InformerFactory, embedded.Config{KubeConfig: cc.KubeConfig, Client: cc.Client,
		Kubeconfig: cc.ComponentConfig.ClientConnection.Kubeconfig, Args: args, Lease: controllerLease(cc.ComponentConfig.LeaderElection, args),
		KnownRuntime: known})
}

// controllerLease is the controller's lease: in the namespace of the QueueState args, timed as the
// scheduler's own lease when the scheduler elects a leader, so that one set of settings governs
// both, else the defaults.
func controllerLease(le componentbaseconfig.LeaderElectionConfiguration, args *config.QueueStateArgs) controller.LeaderElection {
	lease := controller.DefaultLeaderElection(args.Controller.LeaseNamespace)
	if le.LeaderElect {
		lease.LeaseDuration, lease.RenewDeadline, lease.RetryPeriod = le.LeaseDuration.Duration, le.RenewDeadline.Duration, le.RetryPeriod.Duration
	}
	return lease
}

// queueStateArgs returns the QueueState args of the first profile that configures them, or nil; the
// args of later profiles are logged as unused.
func queueStateArgs(profiles []kubeschedulerconfig.KubeSchedulerProfile) runtime.Object {
	var found runtime.Object
	for _, profile := range profiles {
		for _, pc := range profile.PluginConfig {
			switch {
			case pc.Name != queuestate.Name || pc.Args == nil:
			case found == nil:
				found = pc.Args
			default:
				klog.Background().Info("QueueState args of a later profile are not used: the controller and the webhook take the first profile's", "profile", profile.SchedulerName)
			}
		}
	}
	return found
}
