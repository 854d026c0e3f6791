package kubectlqueue

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/queue-scheduler/queue-scheduler/pkg/version"
)

// newVersionCommand prints the plugin's version: the release it was installed at (go install
// …@vX.Y.Z) or built from, and the Kubernetes client it speaks with.
func newVersionCommand(o *Options) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the plugin's version",
		Example: `  # Which release of the plugin is installed
  kubectl queue version`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintf(o.Out, "kubectl-queue %s\n", version.Get())
			return err
		},
	}
}
