package controller

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
)

// LeaderElection says where the controller's lease lives and how it is held.
type LeaderElection struct {
	// Namespace and Name of the Lease.
	Namespace, Name string
	// Identity of this replica; hostname and a random suffix when empty.
	Identity string
	// LeaseDuration, RenewDeadline and RetryPeriod as in client-go's leader election.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// DefaultLeaderElection is the lease the queue-scheduler replicas share.
func DefaultLeaderElection(namespace string) LeaderElection {
	return LeaderElection{
		Namespace:     namespace,
		Name:          ComponentName,
		LeaseDuration: 15 * time.Second,
		RenewDeadline: 10 * time.Second,
		RetryPeriod:   2 * time.Second,
	}
}

// Run campaigns for the lease until ctx ends and syncs whenever this replica leads, so that exactly
// one replica writes status at any time and another takes over when it goes away.
func (c *Controller) Run(ctx context.Context, le LeaderElection) error {
	c.processDone = ctx.Done()
	c.adminNamespace = le.Namespace
	identity := le.Identity
	if identity == "" {
		host, _ := os.Hostname()
		identity = host + "_" + uuid.NewString()
	}
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metaFor(le),
		Client:     c.kube.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: identity},
	}
	config := leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   le.LeaseDuration,
		RenewDeadline:   le.RenewDeadline,
		RetryPeriod:     le.RetryPeriod,
		ReleaseOnCancel: true,
		Name:            ComponentName,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: c.lead,
			OnStoppedLeading: func() { klog.FromContext(ctx).Info("Queue controller lost its lease", "identity", identity) },
		},
	}
	elector, err := leaderelection.NewLeaderElector(config)
	if err != nil {
		return fmt.Errorf("queue controller leader election: %w", err)
	}
	for ctx.Err() == nil {
		elector.Run(ctx)
	}
	return nil
}

func metaFor(le LeaderElection) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: le.Namespace, Name: le.Name}
}
