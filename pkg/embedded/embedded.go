// Package embedded starts, once per scheduler process, what runs beside the scheduling framework:
// the admission webhook server on every replica and the queue controller on the leader. The binary
// starts them once the scheduler is set up, whatever plugins its profiles enable.
package embedded

import (
	"context"
	"fmt"
	"os"
	"sync"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/queue-scheduler/queue-scheduler/apis/config"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/controller"
	"github.com/queue-scheduler/queue-scheduler/pkg/webhook"
)

// LeaseNamespaceEnv names the environment variable that holds the replica's namespace; the Deployment
// sets it from the pod's namespace. kube-system when unset.
const LeaseNamespaceEnv = "POD_NAMESPACE"

// DefaultNamespace is where the lease and the certificate Secret live unless args say otherwise.
func DefaultNamespace() string {
	if ns := os.Getenv(LeaseNamespaceEnv); ns != "" {
		return ns
	}
	return "kube-system"
}

var (
	mu      sync.Mutex
	started = map[string]bool{}
)

// Start starts the webhook server (unless disabled) and then the controller, holding lease, once
// per API server. The webhook comes first: the controller's first writes go through it.
func Start(ctx context.Context, kubeConfig *rest.Config, client kubernetes.Interface, acct *accounting.Accounting,
	args *config.QueueStateArgs, lease controller.LeaderElection) error {
	mu.Lock()
	defer mu.Unlock()
	key := kubeConfig.Host
	if started[key] {
		return nil
	}
	if !args.Webhook.Disabled {
		if _, err := webhook.Start(ctx, client, acct, args.Webhook, args.Controller.LeaseNamespace); err != nil {
			return err
		}
	}
	dyn, err := dynamic.NewForConfig(kubeConfig)
	if err != nil {
		return fmt.Errorf("dynamic client: %w", err)
	}
	c, err := controller.New(client, dyn, acct)
	if err != nil {
		return err
	}
	started[key] = true
	go func() {
		if err := c.Run(ctx, lease); err != nil {
			utilruntime.HandleErrorWithContext(ctx, err, "Queue controller stopped")
		}
		mu.Lock()
		delete(started, key)
		mu.Unlock()
	}()
	return nil
}
