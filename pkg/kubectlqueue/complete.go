package kubectlqueue

import (
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// completeQueues completes queue names from the cluster; with a nil o (a flag registered before
// the options exist) it completes nothing.
func completeQueues(o *Options) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if o == nil || o.clients() != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		list, err := o.queues.SchedulingV1beta1().Queues().List(cmd.Context(), metav1.ListOptions{})
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var names []cobra.Completion
		for _, q := range list.Items {
			if strings.HasPrefix(q.Name, toComplete) {
				names = append(names, q.Name)
			}
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}
