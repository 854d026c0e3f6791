package kubectlqueue

import (
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

// Every command a user can run has a one-line summary and examples in its help.
func TestEveryCommandHasHelpWithExamples(t *testing.T) {
	root := NewCommand(genericiooptions.NewTestIOStreamsDiscard())
	var walk func(*cobra.Command)
	seen := 0
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" || sub.Name() == "completion" || sub.Parent().Name() == "completion" {
				continue
			}
			seen++
			if sub.Short == "" || sub.Example == "" {
				t.Errorf("kubectl queue %s: short %q, example %q; want both", sub.Name(), sub.Short, sub.Example)
			}
			walk(sub)
		}
	}
	walk(root)
	if seen != 15 {
		t.Errorf("%d commands, want the 15 of the plugin", seen)
	}
}

func TestQueueFor(t *testing.T) {
	for _, tt := range []struct{ named, annotation, want string }{
		{"team", "ns-queue", "team"}, {"", "ns-queue", "ns-queue"}, {"", "", "default"},
	} {
		if got := schedulingv1beta1.QueueFor(tt.named, tt.annotation); got != tt.want {
			t.Errorf("QueueFor(%q, %q) = %q, want %q", tt.named, tt.annotation, got, tt.want)
		}
	}
}
