package scheduler

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	schedulerserverconfig "k8s.io/kubernetes/cmd/kube-scheduler/app/config"

	"github.com/queue-scheduler/queue-scheduler/apis/config"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/embedded"
	"github.com/queue-scheduler/queue-scheduler/plugins/queuestate"
)

// StartEmbedded starts the process's admission webhook server and queue controller on the
// accounting the plugins share, once per API server. They are configured by the QueueState args of
// the first profile that has some, else by the defaults: a profile without QueueState still gets
// both.
func StartEmbedded(ctx context.Context, cc *schedulerserverconfig.CompletedConfig) error {
	args, err := config.Decode(queueStateArgs(cc), embedded.DefaultNamespace())
	if err != nil {
		return err
	}
	acct, err := accounting.For(ctx, cc.KubeConfig, cc.InformerFactory)
	if err != nil {
		return err
	}
	return embedded.Start(ctx, cc.KubeConfig, cc.Client, acct, args)
}

// queueStateArgs returns the QueueState args of the first profile that configures them, or nil.
func queueStateArgs(cc *schedulerserverconfig.CompletedConfig) runtime.Object {
	for _, profile := range cc.ComponentConfig.Profiles {
		for _, pc := range profile.PluginConfig {
			if pc.Name == queuestate.Name && pc.Args != nil {
				return pc.Args
			}
		}
	}
	return nil
}
