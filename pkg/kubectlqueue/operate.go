package kubectlqueue

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// newOperateCommand is vcctl's `queue operate`, for people coming from Volcano; namespace is the
// --namespace flag of every command, which operate takes without its shorthand.
func newOperateCommand(o *Options, namespace *pflag.Flag) *cobra.Command {
	var name, action string
	var weight int32
	cmd := &cobra.Command{
		Use:   "operate -n NAME -a open|close|suspend|resume|update [-w WEIGHT]",
		Short: "Change a queue as vcctl queue operate does",
		Long: `Change a queue with vcctl's spelling: -n names the queue, -a the action, -w the weight for
update. The actions issue Commands, as open, close, suspend and resume do.`,
		Example: `  kubectl queue operate -n team-a -a suspend
  kubectl queue operate -n team-a -a update -w 3`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if name == "" {
				return usageErrorf("-n NAME is required")
			}
			if action == "update" {
				if !cmd.Flags().Changed("weight") {
					return usageErrorf("-a update needs -w WEIGHT")
				}
				flags := specFlags{weight: weight}
				return o.update(cmd, name, &flags, "none")
			}
			if cmd.Flags().Changed("weight") {
				return usageErrorf("-w is only for -a update")
			}
			change, ok := map[string]stateChange{"open": open, "close": closeQueue, "suspend": suspend, "resume": resume}[action]
			if !ok {
				return usageErrorf("-a must be open, close, suspend, resume or update, got %q", action)
			}
			return o.changeState(cmd.Context(), name, change, &stateFlags{mode: "none"})
		},
	}
	cmd.Flags().AddFlag(withoutShorthand(namespace))
	cmd.Flags().StringVarP(&name, "name", "n", "", "the queue")
	cmd.Flags().StringVarP(&action, "action", "a", "", "open, close, suspend, resume or update")
	cmd.Flags().Int32VarP(&weight, "weight", "w", 0, "the new weight, with -a update")
	_ = cmd.RegisterFlagCompletionFunc("name", completeQueues(o))
	_ = cmd.RegisterFlagCompletionFunc("action", cobra.FixedCompletions(
		[]string{"open", "close", "suspend", "resume", "update"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// withoutShorthand is f without its shorthand. A local flag of f's name shadows the persistent one,
// whose -n would collide with operate's own -n (cobra panics on it); it sets the same value, so
// operate's Commands are created where --namespace says, as every command's are.
func withoutShorthand(f *pflag.Flag) *pflag.Flag {
	out := *f
	out.Shorthand = ""
	return &out
}
