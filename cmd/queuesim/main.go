// Command queuesim plays scenarios on the whole queue-scheduler system, on an embedded control plane
// with simulated nodes, and reports what each queue got; `queuesim up` keeps such a cluster running.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"github.com/queue-scheduler/queue-scheduler/pkg/queuesim"
)

func main() {
	os.Exit(run())
}

// run executes the command until it ends or is interrupted, and returns the exit code.
func run() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newCommand().ExecuteContext(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		return 1
	}
	return 0
}

func newCommand() *cobra.Command {
	var verbose bool
	root := &cobra.Command{
		Use:           "queuesim",
		Short:         "Run queue-scheduler on an embedded control plane with simulated nodes",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRun: func(*cobra.Command, []string) {
			if !verbose {
				klog.SetLogger(logr.Discard()) // the control plane logs a great deal
			}
		},
	}
	root.PersistentFlags().BoolVarP(&verbose, "verbose", "v", false, "show the control plane's logs")
	root.AddCommand(newRunCommand(), newReplayCommand(), newUpCommand())
	return root
}

func newRunCommand() *cobra.Command {
	var out string
	var scale float64
	var noReservations, knownRuntimes bool
	var snapshotAt []time.Duration
	cmd := &cobra.Command{
		Use:   "run SCENARIO.yaml",
		Short: "Play a scenario and report what each queue got against what it deserved",
		Example: `  queuesim run examples/scenarios/demo.yaml --out out/demo
  queuesim run examples/scenarios/fairness.yaml --time-scale 120
  queuesim run examples/scenarios/big-gang.yaml --no-reservations --out out/big-gang-off
  queuesim run examples/scenarios/backlog.yaml --known-runtimes --out out/backlog-known
  queuesim run examples/scenarios/backlog.yaml --snapshot-at 10m --out out/backlog`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := queuesim.Load(args[0])
			if err != nil {
				return err
			}
			if scale > 0 {
				s.TimeScale = scale
			}
			if noReservations {
				s.NoReservations()
			}
			if knownRuntimes {
				s.KnowRuntimes()
			}
			if err := s.TakeSnapshots(snapshotAt); err != nil {
				return err
			}
			if _, err := fmt.Fprintf(cmd.OutOrStdout(), "Playing %q: %s of simulated time at %gx\n", s.Name, s.Duration.Duration, s.TimeScale); err != nil {
				return err
			}
			result, err := queuesim.Run(cmd.Context(), s, queuesim.Options{Progress: cmd.OutOrStdout()})
			if err != nil {
				return err
			}
			if err := result.WriteReport(cmd.OutOrStdout()); err != nil {
				return err
			}
			if err := result.Save(out); err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "\nWrote %s, %s, %s and %s to %s\n",
				queuesim.ReportFile, queuesim.ChartFile, queuesim.SeriesFile, queuesim.ResultFile, out)
			return err
		},
	}
	cmd.Flags().StringVar(&out, "out", "out", "folder for the report, the chart and the raw series")
	cmd.Flags().Float64Var(&scale, "time-scale", 0, "simulated seconds per real second (default: the scenario's)")
	cmd.Flags().BoolVar(&noReservations, "no-reservations", false, "play the scenario without its reservations (the Backfill plugin off), to compare")
	cmd.Flags().BoolVar(&knownRuntimes, "known-runtimes", false, "tell the forecast each pod's runtime instead of the runtimes it learns, to measure its model alone")
	cmd.Flags().DurationSliceVar(&snapshotAt, "snapshot-at", nil, "simulated moments to save the forecast's snapshot at, for queuesim replay (snapshot-10m0s.yaml in --out)")
	return cmd
}

func newReplayCommand() *cobra.Command {
	var out string
	var opts queuesim.ReplayOptions
	cmd := &cobra.Command{
		Use:   "replay SNAPSHOT.yaml",
		Short: "Play a forecast's snapshot with the real scheduler and compare the starts with the forecast's",
		Long: `Play a ForecastSnapshot (kubectl get forecastsnapshot current -o yaml, or a file queuesim run
--snapshot-at saved) on an embedded control plane with the real scheduler: its nodes, its running
pods until their expected ends, its queues, and its pending work in the scheduler's order, each
running the runtime the forecast expected. The report compares each expected start with the start
the replay shows: the forecast's own error, on its own input.`,
		Example: `  kubectl get forecastsnapshot current -o yaml > snapshot.yaml
  queuesim replay snapshot.yaml --time-scale 30 --out out/replay
  queuesim replay out/backlog/snapshot-10m0s.yaml --time-scale 20`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			snap, err := queuesim.LoadSnapshot(args[0])
			if err != nil {
				return err
			}
			if opts.TimeScale < 0 {
				return fmt.Errorf("--time-scale must be positive, got %g", opts.TimeScale)
			}
			if _, err := fmt.Fprintf(cmd.OutOrStdout(), "Replaying the snapshot of %s: %d nodes, %d pieces of pending work\n",
				snap.ForecastTime.UTC().Format(time.RFC3339), len(snap.Nodes), len(snap.Pending)); err != nil {
				return err
			}
			opts.Progress = cmd.OutOrStdout()
			result, err := queuesim.Replay(cmd.Context(), snap, opts)
			if err != nil {
				return err
			}
			if err := result.WriteReport(cmd.OutOrStdout()); err != nil {
				return err
			}
			return result.Save(out)
		},
	}
	cmd.Flags().StringVar(&out, "out", "out", "folder for the report, the chart and the raw series")
	cmd.Flags().Float64Var(&opts.TimeScale, "time-scale", queuesim.DefaultReplayScale, "simulated seconds per real second")
	cmd.Flags().DurationVar(&opts.Duration, "duration", 0, "simulated time to play (default: until the latest expected start, a quarter as long again, and 5m)")
	return cmd
}

func newUpCommand() *cobra.Command {
	var kubeconfig string
	cmd := &cobra.Command{
		Use:     "up",
		Short:   "Keep an embedded cluster with queue-scheduler running until Ctrl-C",
		Example: `  queuesim up --kubeconfig /tmp/queuesim.kubeconfig`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return queuesim.Up(cmd.Context(), queuesim.UpOptions{Kubeconfig: kubeconfig, Out: cmd.OutOrStdout()})
		},
	}
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "also write the kubeconfig here (removed on exit)")
	return cmd
}
