package controller

import (
	"context"
	"os"
	"sync"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
)

// LeaseNamespaceEnv names the environment variable that holds the namespace of the controller's
// lease; the Deployment sets it to the pod's namespace. kube-system when unset.
const LeaseNamespaceEnv = "POD_NAMESPACE"

var (
	embeddedMu sync.Mutex
	embedded   = map[string]bool{}
)

// StartEmbedded starts the controller in the scheduler process once per API server: every replica
// campaigns for the lease, and the leader syncs.
func StartEmbedded(ctx context.Context, h fwk.Handle, acct *accounting.Accounting) error {
	embeddedMu.Lock()
	defer embeddedMu.Unlock()
	key := h.KubeConfig().Host
	if embedded[key] {
		return nil
	}
	c, err := New(h.ClientSet(), acct)
	if err != nil {
		return err
	}
	embedded[key] = true
	namespace := os.Getenv(LeaseNamespaceEnv)
	if namespace == "" {
		namespace = "kube-system"
	}
	go func() {
		if err := c.Run(ctx, DefaultLeaderElection(namespace)); err != nil {
			utilruntime.HandleErrorWithContext(ctx, err, "Queue controller stopped")
		}
		embeddedMu.Lock()
		delete(embedded, key)
		embeddedMu.Unlock()
	}()
	return nil
}
