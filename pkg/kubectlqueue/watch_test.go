package kubectlqueue

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	k8stesting "k8s.io/client-go/testing"

	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned/fake"
)

// output is a writer the test reads while a command writes to it.
type output struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// waitOutput waits until the output is want.
func waitOutput(t *testing.T, out *output, want string) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
		return out.String() == want, nil
	}); err != nil {
		t.Fatalf("output %q, want %q", out.String(), want)
	}
}

// With --watch, the output is printed again at every interval in which it changed, and only then.
func TestWatchPrintsAgainWhatChanged(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	out := &output{}
	f := &watchFlags{watch: true, interval: 5 * time.Millisecond}
	done := make(chan error, 1)
	go func() {
		done <- f.run(ctx, out, nil, func(w io.Writer) error {
			calls++
			text := "before"
			if calls > 3 {
				text = "after"
			}
			_, err := io.WriteString(w, text)
			return err
		})
	}()
	waitOutput(t, out, "before\nafter")
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if out.String() != "before\nafter" {
		t.Errorf("output %q, want each change once", out.String())
	}
}

// Where the live view is served, a change of a queue summary is printed at once, not at the next
// interval.
func TestWatchPrintsAChangeOfTheLiveViewAtOnce(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	summary := &visibilityv1beta1.QueueSummary{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Allocated: cpu("1")}
	client := fake.NewSimpleClientset(summary)
	o := &Options{queues: client}
	follow := o.followQueues(ctx, true)
	if follow == nil {
		t.Fatal("no changes followed where the live view is served")
	}
	out := &output{}
	f := &watchFlags{watch: true, interval: time.Hour}
	go func() {
		_ = f.run(ctx, out, follow, func(w io.Writer) error {
			s, err := client.VisibilityV1beta1().QueueSummaries().Get(ctx, "a", metav1.GetOptions{})
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(w, "a cpu=%s", s.Allocated.Cpu())
			return err
		})
	}()
	waitOutput(t, out, "a cpu=1")
	changed := summary.DeepCopy()
	changed.Allocated = cpu("3")
	gvr := visibilityv1beta1.SchemeGroupVersion.WithResource(visibilityv1beta1.QueueSummaries)
	if err := client.Tracker().Update(gvr, changed, ""); err != nil {
		t.Fatal(err)
	}
	waitOutput(t, out, "a cpu=1\na cpu=3")
}

// Where the live view is not served (or not readable), nor when not watching, nothing is followed:
// the interval alone brings the changes.
func TestWatchFollowsNothingWithoutTheLiveView(t *testing.T) {
	ctx := context.Background()
	client := fake.NewSimpleClientset()
	client.PrependReactor("list", "queuesummaries", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("the server could not find the requested resource")
	})
	o := &Options{queues: client}
	if o.followQueues(ctx, true) != nil {
		t.Error("followed the changes of a live view that is not served")
	}
	o = &Options{queues: fake.NewSimpleClientset()}
	if o.followQueues(ctx, false) != nil {
		t.Error("followed changes without --watch")
	}
}
