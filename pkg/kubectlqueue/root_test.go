package kubectlqueue

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// -n is --namespace, as kubectl spells it, on every command but operate, whose -n names the queue
// as vcctl's does; operate still takes --namespace.
func TestNamespaceShorthand(t *testing.T) {
	for _, tt := range []struct {
		name          string
		args          []string
		wantNamespace string
		wantQueue     string
	}{
		{name: "what-if -n", args: []string{"what-if", "-f", "change.yaml", "-n", "team-a"}, wantNamespace: "team-a"},
		{name: "jobs -n", args: []string{"jobs", "team-a", "-n", "team-a"}, wantNamespace: "team-a"},
		{name: "eta -n", args: []string{"eta", "train", "-n", "team-a"}, wantNamespace: "team-a"},
		{name: "eta -n before the name", args: []string{"eta", "-n", "team-a", "train"}, wantNamespace: "team-a"},
		{name: "suspend -n", args: []string{"suspend", "team-a", "-n", "team-a", "--wait"}, wantNamespace: "team-a"},
		{name: "list --namespace", args: []string{"list", "--namespace", "team-a"}, wantNamespace: "team-a"},
		{name: "operate -n names the queue", args: []string{"operate", "-n", "q", "-a", "open"}, wantQueue: "q"},
		{name: "operate --namespace", args: []string{"operate", "-n", "q", "-a", "open", "--namespace", "team-a"},
			wantNamespace: "team-a", wantQueue: "q"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := &Options{IOStreams: genericiooptions.NewTestIOStreamsDiscard(), ConfigFlags: genericclioptions.NewConfigFlags(true)}
			cmd, rest, err := newRootCommand(o).Find(tt.args)
			if err != nil {
				t.Fatalf("finding the command of %v: %v", tt.args, err)
			}
			if err := cmd.ParseFlags(rest); err != nil {
				t.Fatalf("parsing %v: %v", tt.args, err)
			}
			if diff := cmp.Diff(tt.wantNamespace, *o.ConfigFlags.Namespace); diff != "" {
				t.Errorf("namespace (-want,+got):\n%s", diff)
			}
			queue := ""
			if f := cmd.Flags().Lookup("name"); f != nil {
				queue = f.Value.String()
			}
			if diff := cmp.Diff(tt.wantQueue, queue); diff != "" {
				t.Errorf("operate's queue (-want,+got):\n%s", diff)
			}
		})
	}
}
