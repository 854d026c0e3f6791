package scheduler

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/tools/cache"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/component-base/cli/globalflag"
	basecompatibility "k8s.io/component-base/compatibility"
	"k8s.io/component-base/featuregate"
	"k8s.io/component-base/logs"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/component-base/term"
	"k8s.io/component-base/version/verflag"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"

	"github.com/queue-scheduler/queue-scheduler/pkg/version"
)

// NewCommand returns the queue-scheduler command: kube-scheduler's flags and configuration file, the
// queue plugins available to its profiles, and the embedded controller and webhook server, started
// once per process whatever the profiles enable.
func NewCommand() *cobra.Command {
	opts := options.NewOptions()
	cmd := &cobra.Command{
		Use: Name,
		Long: `queue-scheduler is kube-scheduler with the queue-scheduler plugins: queues with weighted fair
shares, capabilities and guarantees, gangs, reclaim, suspension and QueueUnits. It also runs the
queue controller (leader-elected) and the admission webhook server. Pods opt in with
spec.schedulerName: queue-scheduler.`,
		PersistentPreRunE: func(*cobra.Command, []string) error {
			// Feature gates are set before RunE.
			return opts.ComponentGlobalsRegistry.Set()
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return run(cmd, opts) },
		Args: func(cmd *cobra.Command, args []string) error {
			for _, arg := range args {
				if arg != "" {
					return fmt.Errorf("%q takes no arguments, got %q", cmd.CommandPath(), args)
				}
			}
			return nil
		},
	}
	nfs := opts.Flags
	verflag.AddFlags(nfs.FlagSet("global"))
	globalflag.AddGlobalFlags(nfs.FlagSet("global"), cmd.Name(), logs.SkipLoggingConfigurationFlags())
	for _, f := range nfs.FlagSets {
		cmd.Flags().AddFlagSet(f)
	}
	cols, _, _ := term.TerminalSize(cmd.OutOrStdout())
	cliflag.SetUsageAndHelpFunc(cmd, *nfs, cols)
	if err := cmd.MarkFlagFilename("config", "yaml", "yml", "json"); err != nil {
		klog.Background().Error(err, "Failed to mark flag filename")
	}
	return cmd
}

// run sets the scheduler up from its options, starts the embedded controller and webhook server, and
// runs the scheduler until a termination signal.
func run(cmd *cobra.Command, opts *options.Options) error {
	printVersionIfRequested(cmd)
	verflag.PrintAndExitIfRequested()
	fg := opts.ComponentGlobalsRegistry.FeatureGateFor(basecompatibility.DefaultKubeComponent)
	if err := logsapi.ValidateAndApply(opts.Logs, fg); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		os.Exit(1)
	}
	cliflag.PrintFlags(cmd.Flags())
	if opts.InformerName == nil {
		name, err := cache.NewInformerName(Name)
		if err != nil {
			return err
		}
		opts.InformerName = name
	}
	ctx := genericapiserver.SetupSignalContext()
	WithoutMetricsAllowList(opts)
	root, err := NewRootFor(opts.ConfigFile)
	if err != nil {
		return err
	}
	cc, sched, err := app.Setup(ctx, opts, PluginOptions(root)...)
	if err != nil {
		return err
	}
	if mutable, ok := fg.(featuregate.MutableFeatureGate); ok {
		mutable.AddMetrics()
	}
	opts.ComponentGlobalsRegistry.AddMetrics()
	if err := StartEmbedded(ctx, cc, root, nil); err != nil {
		return err
	}
	return app.Run(ctx, cc, sched)
}

// printVersionIfRequested answers --version with the project's version (and the Kubernetes version
// it is built on), then exits; --version=raw still prints the Kubernetes component version in full.
func printVersionIfRequested(cmd *cobra.Command) {
	if f := cmd.Flags().Lookup("version"); f != nil && f.Value.String() == "true" {
		_, _ = fmt.Fprintf(cmd.OutOrStdout(), "%s %s\n", Name, version.Get())
		os.Exit(0)
	}
}

// WithoutMetricsAllowList states that no metric label allow-list is configured, when none is: the
// metrics options otherwise read an allow-list manifest named by no flag and log an error ("The
// manifest file is empty") at every start.
func WithoutMetricsAllowList(opts *options.Options) {
	if opts.Metrics != nil && opts.Metrics.AllowListMapping == nil && opts.Metrics.AllowListMappingManifest == "" {
		opts.Metrics.AllowListMapping = map[string]string{}
	}
}
