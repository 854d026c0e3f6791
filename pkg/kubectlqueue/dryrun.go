package kubectlqueue

import (
	"fmt"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// dryRun is the --dry-run mode: "none", "client" (nothing is sent) or "server" (sent, not stored).
type dryRun string

func addDryRun(cmd *cobra.Command, mode *dryRun) {
	cmd.Flags().StringVar((*string)(mode), "dry-run", "none", `"none", "client" (print what would be done) or "server" (have the API server check it without storing)`)
	_ = cmd.RegisterFlagCompletionFunc("dry-run", cobra.FixedCompletions([]string{"none", "client", "server"}, cobra.ShellCompDirectiveNoFileComp))
}

func (d dryRun) validate() error {
	switch d {
	case "none", "client", "server":
		return nil
	}
	return fmt.Errorf(`--dry-run must be "none", "client" or "server", got %q`, string(d))
}

// client says nothing may be sent.
func (d dryRun) client() bool { return d == "client" }

// option is what the API calls carry.
func (d dryRun) option() []string {
	if d == "server" {
		return []string{metav1.DryRunAll}
	}
	return nil
}

// suffix is what the result line says of the mode, as kubectl does.
func (d dryRun) suffix() string {
	switch d {
	case "client":
		return " (dry run)"
	case "server":
		return " (server dry run)"
	}
	return ""
}
