// Package kubectlqueue is the kubectl plugin for queue operators: `kubectl queue create|list|get|
// describe|update|open|close|suspend|resume|delete|jobs|operate`. It talks to the API server with the
// user's kubeconfig (k8s.io/cli-runtime) and the typed clientset of the queue-scheduler API.
package kubectlqueue

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned"
	"github.com/queue-scheduler/queue-scheduler/pkg/queueclient"
)

// Options is what every subcommand shares: where to find the cluster, and where to write.
type Options struct {
	genericiooptions.IOStreams
	ConfigFlags *genericclioptions.ConfigFlags
	// Now is the clock ages are measured against.
	Now func() time.Time

	queues versioned.Interface
	kube   kubernetes.Interface
}

// NewCommand returns the `kubectl queue` command writing to streams.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	return newRootCommand(&Options{IOStreams: streams, ConfigFlags: genericclioptions.NewConfigFlags(true), Now: time.Now})
}

// newRootCommand is the `kubectl queue` command of o.
func newRootCommand(o *Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "kubectl-queue",
		Short: "Manage queue-scheduler queues",
		Long: `Manage the queues of queue-scheduler: create and update them, see their share of the cluster
and the work in them, and open, close, suspend or resume them.`,
		Example: `  kubectl queue create team-a --namespaces team=a --weight 2 --capability cpu=64,memory=256Gi
  kubectl queue list -o wide
  kubectl queue suspend team-a --wait
  kubectl queue describe team-a`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	cmd.SetOut(o.Out)
	cmd.SetErr(o.ErrOut)
	config := configFlagSet(o.ConfigFlags)
	cmd.PersistentFlags().AddFlagSet(config)
	cmd.AddCommand(
		newCreateCommand(o), newListCommand(o), newGetCommand(o), newDescribeCommand(o), newUpdateCommand(o),
		newStateCommand(o, open), newStateCommand(o, closeQueue), newStateCommand(o, suspend), newStateCommand(o, resume),
		newDeleteCommand(o), newJobsCommand(o), newETACommand(o), newWhatIfCommand(o), newOperateCommand(o, config.Lookup("namespace")), newVersionCommand(o),
	)
	return cmd
}

// configFlagSet holds kubectl's connection flags (--kubeconfig, --context, --namespace/-n…), as
// kubectl spells them. `operate` shadows --namespace with one of no shorthand (newOperateCommand):
// its -n names the queue, as vcctl's does.
func configFlagSet(flags *genericclioptions.ConfigFlags) *pflag.FlagSet {
	all := pflag.NewFlagSet("config", pflag.ContinueOnError)
	flags.AddFlags(all)
	return all
}

// clients builds the API clients on first use.
func (o *Options) clients() error {
	if o.queues != nil {
		return nil
	}
	config, err := o.ConfigFlags.ToRESTConfig()
	if err != nil {
		return fmt.Errorf("reading the kubeconfig: %w", err)
	}
	// The API server's warnings (the admission webhook's, deprecations) read as kubectl prints them.
	config.WarningHandler = rest.NewWarningWriter(o.ErrOut, rest.WarningWriterOptions{Deduplicate: true})
	if o.queues, err = queueclient.New(config); err != nil {
		return err
	}
	o.kube, err = kubernetes.NewForConfig(config)
	return err
}

// namespace is the namespace Commands are created in: --namespace, else the context's, else default.
func (o *Options) namespace() (string, error) {
	ns, _, err := o.ConfigFlags.ToRawKubeConfigLoader().Namespace()
	return ns, err
}
