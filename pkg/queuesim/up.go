package queuesim

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/queue-scheduler/queue-scheduler/pkg/localcluster"
)

// UpOptions shape `queuesim up`.
type UpOptions struct {
	// Nodes are the simulated nodes; four of 16 cpu and 64Gi when empty.
	Nodes []NodeGroup
	// Kubeconfig, when set, is where a copy of the kubeconfig is written (and removed at the end).
	Kubeconfig string
	// Out receives the instructions.
	Out io.Writer
	// Ready, when set, is told the kubeconfig's path once the cluster serves.
	Ready func(kubeconfig string)
}

// DefaultNodes are the nodes of `queuesim up` without a scenario.
func DefaultNodes() []NodeGroup {
	return []NodeGroup{{Name: "node", Count: 4, CPU: Quantity{resource.MustParse("16"), true}, Memory: Quantity{resource.MustParse("64Gi"), true}}}
}

// Up runs the whole system with simulated nodes until ctx ends, then stops it and removes what it
// wrote.
func Up(ctx context.Context, opts UpOptions) error {
	if len(opts.Nodes) == 0 {
		opts.Nodes = DefaultNodes()
	}
	cluster, err := localcluster.Start(ctx, localcluster.Options{RBAC: true})
	if err != nil {
		return fmt.Errorf("start the control plane: %w", err)
	}
	defer cluster.Stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c := clients{kube: cluster.Kube, queues: cluster.Queues, scale: 1}
	if err := c.createNodes(ctx, opts.Nodes); err != nil {
		return err
	}
	if err := runNodes(ctx, cluster, &clock{start: time.Now(), scale: 1}, nil); err != nil {
		return err
	}
	kubeconfig := cluster.Kubeconfig
	if opts.Kubeconfig != "" {
		raw, err := os.ReadFile(cluster.Kubeconfig)
		if err != nil {
			return err
		}
		if err := os.WriteFile(opts.Kubeconfig, raw, 0o600); err != nil {
			return err
		}
		defer func() { _ = os.Remove(opts.Kubeconfig) }()
		kubeconfig = opts.Kubeconfig
	}
	if opts.Out != nil {
		_, err := fmt.Fprintf(opts.Out, `queue-scheduler is running on an embedded control plane with %d simulated nodes.
  export KUBECONFIG=%s
  kubectl get nodes
  kubectl queue list          # go install ./cmd/kubectl-queue, or make build and use bin/kubectl-queue
  kubectl queue create demo --weight 2 --all-namespaces
or follow docs/getting-started.md, which creates team-a.
The API server authorizes with RBAC and the shipped roles, as a cluster does. The kubeconfig is a
cluster administrator's; act as a tenant with --as NAME --as-group system:authenticated.
The Job controller, the garbage collector and the namespace controller run as on a cluster:
deleting a Job deletes its pods, deleting a namespace everything in it.
Pods need spec.schedulerName: queue-scheduler; the simulated kubelets run a pod for as long as its
annotation %s asks ("5m"), else until it is deleted.
Press Ctrl-C to stop; nothing is left behind.
`, nodeCount(opts.Nodes), kubeconfig, RuntimeAnnotation)
		if err != nil {
			return err
		}
	}
	if opts.Ready != nil {
		opts.Ready(kubeconfig)
	}
	<-ctx.Done()
	return nil
}

func nodeCount(groups []NodeGroup) int {
	n := 0
	for _, g := range groups {
		n += g.Count
	}
	return n
}
