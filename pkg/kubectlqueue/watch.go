package kubectlqueue

import (
	"bytes"
	"context"
	"io"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// followGap is the least time between two prints that changes of the live view bring about: a
// change is printed within it, and a burst of changes once.
const followGap = 250 * time.Millisecond

// watchFlags make a command print again whenever what it prints changes.
type watchFlags struct {
	watch    bool
	interval time.Duration
}

func (f *watchFlags) add(cmd *cobra.Command) {
	cmd.Flags().BoolVarP(&f.watch, "watch", "w", false, "print again whenever the output changes, until interrupted")
	cmd.Flags().DurationVar(&f.interval, "interval", 2*time.Second,
		"with --watch, how often to read again; where the live view is served, its changes are printed within a quarter of a second as well")
}

// run prints once, or with --watch again whenever what it prints may have changed, until ctx ends
// (Ctrl-C): at every interval, and at each signal of follow (nil for none), at most once per
// followGap. A print that equals the last one is not written; each goes whole to out, so a reader
// never sees half a table.
func (f *watchFlags) run(ctx context.Context, out io.Writer, follow <-chan struct{}, print func(io.Writer) error) error {
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
		printed := time.Now()
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
		case <-follow:
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(time.Until(printed.Add(followGap))):
			}
		}
	}
}

// followQueues signals each change of the live view's queue summaries while ctx lasts, for a
// watching command to print again at once. It is nil where the view is not served or the user may
// not watch it, and stops signalling when the watch ends: the interval alone then brings the changes.
func (o *Options) followQueues(ctx context.Context, watching bool) <-chan struct{} {
	if !watching {
		return nil
	}
	api := o.queues.VisibilityV1beta1().QueueSummaries()
	list, err := api.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	w, err := api.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		return nil
	}
	changes := make(chan struct{}, 1)
	go func() {
		defer w.Stop()
		for range w.ResultChan() {
			select {
			case changes <- struct{}{}:
			default: // a signal is waiting: the next print takes this change too
			}
		}
	}()
	return changes
}
