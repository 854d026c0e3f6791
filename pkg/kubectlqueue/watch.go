package kubectlqueue

import (
	"bytes"
	"context"
	"io"
	"time"

	"github.com/spf13/cobra"
)

// watchFlags make a command print again whenever what it prints changes.
type watchFlags struct {
	watch    bool
	interval time.Duration
}

func (f *watchFlags) add(cmd *cobra.Command) {
	cmd.Flags().BoolVarP(&f.watch, "watch", "w", false, "print again whenever the output changes, until interrupted")
	cmd.Flags().DurationVar(&f.interval, "interval", 2*time.Second, "with --watch, how often to read again")
}

// run prints once, or with --watch again at every interval in which the output changed, until ctx
// ends (Ctrl-C). Each print goes whole to out, so a reader never sees half a table.
func (f *watchFlags) run(ctx context.Context, out io.Writer, print func(io.Writer) error) error {
	if !f.watch {
		return print(out)
	}
	if f.interval <= 0 {
		return usageErrorf("--interval must be positive, not %s", f.interval)
	}
	var last []byte
	ticker := time.NewTicker(f.interval)
	defer ticker.Stop()
	for {
		var buf bytes.Buffer
		if err := print(&buf); err != nil {
			return err
		}
		if !bytes.Equal(buf.Bytes(), last) {
			if last != nil {
				if _, err := io.WriteString(out, "\n"); err != nil {
					return err
				}
			}
			if _, err := out.Write(buf.Bytes()); err != nil {
				return err
			}
			last = buf.Bytes()
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}
