package kubectlqueue

import (
	"strings"

	"github.com/spf13/cobra"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

// specFlags are the queue fields create and update set.
type specFlags struct {
	weight      int32
	state       string
	capability  string
	guarantee   string
	parent      string
	priority    int32
	reclaimable bool
	namespaces  string
	allNS       bool
}

func (f *specFlags) add(cmd *cobra.Command, withState bool) {
	cmd.Flags().Int32Var(&f.weight, "weight", 1, "the queue's weight in the fair share (at least 1)")
	cmd.Flags().StringVar(&f.capability, "capability", "", "the most the queue may hold, e.g. cpu=8,memory=16Gi,nvidia.com/gpu=2")
	cmd.Flags().StringVar(&f.guarantee, "guarantee", "", "what the queue is always given, e.g. cpu=4,memory=8Gi")
	cmd.Flags().StringVar(&f.parent, "parent", "", "the parent queue in the hierarchy (default root)")
	cmd.Flags().Int32Var(&f.priority, "priority", 0, "the queue's priority among its siblings")
	cmd.Flags().BoolVar(&f.reclaimable, "reclaimable", true, "whether other queues may reclaim what this queue borrows")
	cmd.Flags().StringVar(&f.namespaces, "namespaces", "", "a label selector of the namespaces whose work the queue accepts, e.g. team=a or 'kubernetes.io/metadata.name in (ml,ml-dev)'")
	cmd.Flags().BoolVar(&f.allNS, "all-namespaces", false, "accept work from every namespace")
	cmd.MarkFlagsMutuallyExclusive("namespaces", "all-namespaces")
	if withState {
		cmd.Flags().StringVar(&f.state, "state", "", "the requested state: Open, Closed or Suspended (default Open)")
	}
	_ = cmd.RegisterFlagCompletionFunc("parent", completeQueues(nil))
	_ = cmd.RegisterFlagCompletionFunc("state", cobra.FixedCompletions(
		[]string{"Open", "Closed", "Suspended"}, cobra.ShellCompDirectiveNoFileComp))
}

// anyChanged says whether the user set any of the queue flags.
func (f *specFlags) anyChanged(cmd *cobra.Command) bool {
	for _, name := range []string{"weight", "state", "capability", "guarantee", "parent", "priority", "reclaimable", "namespaces", "all-namespaces"} {
		if cmd.Flags().Changed(name) {
			return true
		}
	}
	return false
}

// apply writes the flags the user set onto spec; it changes nothing unless every flag is valid.
func (f *specFlags) apply(cmd *cobra.Command, spec *schedulingv1beta1.QueueSpec) error {
	out := *spec.DeepCopy()
	changed := cmd.Flags().Changed
	if changed("weight") || spec.Weight == 0 {
		if f.weight < 1 {
			return usageErrorf("--weight must be at least 1, got %d", f.weight)
		}
		out.Weight = f.weight
	}
	if changed("state") {
		state, err := parseState(f.state)
		if err != nil {
			return err
		}
		out.State = state
	}
	if changed("capability") {
		list, err := parseResources("capability", f.capability)
		if err != nil {
			return err
		}
		out.Capability = list
	}
	if changed("guarantee") {
		list, err := parseResources("guarantee", f.guarantee)
		if err != nil {
			return err
		}
		out.Guarantee.Resource = list
	}
	if changed("parent") {
		out.Parent = f.parent
	}
	if changed("priority") {
		out.Priority = f.priority
	}
	if changed("reclaimable") {
		out.Reclaimable = &f.reclaimable
	}
	if changed("namespaces") {
		sel, err := parseNamespaces(f.namespaces)
		if err != nil {
			return err
		}
		out.NamespaceSelector = sel
	}
	if changed("all-namespaces") {
		out.NamespaceSelector = nil
		if f.allNS {
			out.NamespaceSelector = &metav1.LabelSelector{}
		}
	}
	*spec = out
	return nil
}

func parseState(s string) (schedulingv1beta1.QueueState, error) {
	for _, state := range []schedulingv1beta1.QueueState{schedulingv1beta1.QueueStateOpen, schedulingv1beta1.QueueStateClosed, schedulingv1beta1.QueueStateSuspended} {
		if strings.EqualFold(s, string(state)) {
			return state, nil
		}
	}
	return "", usageErrorf("--state must be Open, Closed or Suspended, got %q", s)
}

// parseResources reads "cpu=8,memory=16Gi" into a resource list; "" clears it.
func parseResources(flag, s string) (v1.ResourceList, error) {
	list := v1.ResourceList{}
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	for _, pair := range strings.Split(s, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok || name == "" {
			return nil, usageErrorf("--%s %q: %q is not name=quantity", flag, s, pair)
		}
		q, err := resource.ParseQuantity(value)
		if err != nil {
			return nil, usageErrorf("--%s %q: %q is not a quantity for %s (examples: 8, 500m, 16Gi)", flag, s, value, name)
		}
		if q.Sign() < 0 {
			return nil, usageErrorf("--%s %q: %s must not be negative", flag, s, name)
		}
		if _, dup := list[v1.ResourceName(name)]; dup {
			return nil, usageErrorf("--%s %q: %s is given twice", flag, s, name)
		}
		list[v1.ResourceName(name)] = q
	}
	return list, nil
}

// parseNamespaces reads --namespaces: a label selector of namespaces; "" selects none.
func parseNamespaces(s string) (*metav1.LabelSelector, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	sel, err := metav1.ParseToLabelSelector(s)
	if err != nil {
		return nil, usageErrorf("--namespaces %q is not a label selector (examples: team=a, 'env in (prod,staging)'): %v", s, err)
	}
	return sel, nil
}
