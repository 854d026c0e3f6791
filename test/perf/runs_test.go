package perf

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned"
)

// waitBound reads the pod events until n pods of the run are bound, counting those in bound already,
// and calls onBound with each pod the first time it is seen bound; past -bind-timeout it fails with
// why's account.
func waitBound(b *testing.B, events <-chan watch.Event, run string, n int, bound map[string]bool, why func() string, onBound func(*v1.Pod)) {
	deadline := time.After(*bindTimeout)
	for len(bound) < n {
		select {
		case e, open := <-events:
			if !open {
				b.Fatalf("%s: the pod watch ended with %d of %d pods bound", run, len(bound), n)
			}
			pod, ok := e.Object.(*v1.Pod)
			if !ok || pod.Labels["run"] != run || pod.Spec.NodeName == "" || bound[pod.Name] {
				continue
			}
			bound[pod.Name] = true
			onBound(pod)
		case <-deadline:
			b.Fatalf("%s: only %d of %d pods bound after %s; %s", run, len(bound), n, *bindTimeout, why())
		}
	}
}

// unboundReason names a pod of the run not bound yet and its PodScheduled condition.
func unboundReason(ctx context.Context, kube kubernetes.Interface, namespace, run string) string {
	list, err := kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: "run=" + run})
	if err != nil {
		return err.Error()
	}
	for _, p := range list.Items {
		if p.Spec.NodeName != "" {
			continue
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type == v1.PodScheduled {
				return fmt.Sprintf("pod %s: %s %s", p.Name, cond.Reason, cond.Message)
			}
		}
		return fmt.Sprintf("pod %s: no PodScheduled condition (gates %v)", p.Name, p.Spec.SchedulingGates)
	}
	return "all pods bound"
}

// waitQueuesSettled waits until the scheduler counts no pods and no unfinished PodGroups in any
// queue whose name starts with prefix (its live view says so): the deletions at the end of a run are
// behind it before the next run starts. The Queue status writes those deletions cause come at their
// pace (a queue every 5 s, 5 a second in all: 200 s for 1,000 queues) and may fall in the next run's
// window, at most 5 writes a second; in the throughput cases the run after queue-scheduler's is never
// the upstream side's it is compared with.
func waitQueuesSettled(b *testing.B, ctx context.Context, queues versioned.Interface, prefix string) {
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, *bindTimeout, true, func(ctx context.Context) (bool, error) {
		list, err := queues.VisibilityV1beta1().QueueSummaries().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		for _, q := range list.Items {
			g := q.PodGroups
			if strings.HasPrefix(q.Name, prefix) && q.RunningPods+q.PendingPods+g.Pending+g.Inqueue+g.Running+g.Unknown > 0 {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		b.Fatalf("the scheduler still counts work in queues %s* %s after the run", prefix, *bindTimeout)
	}
}

// runProfiles is a folder for a CPU profile of each measured run's window, the whole process (API
// server and etcd included), and its allocation profiles at the window's start and end. Not with go
// test's -cpuprofile, which holds the one profiler for the whole binary.
var runProfiles = flag.String("run-profiles", "", "folder for a CPU profile of each measured throughput and gang run, from just before the first release to the last binding, and its allocation profiles; none when empty")

// profileRun starts the profiles of a measured run, named <name>-allocs-start.pprof, <name>.pprof
// (CPU) and <name>-allocs.pprof, when -run-profiles names a folder, and returns what ends them, which
// may be called more than once. The allocation profiles follow a collection, which brings them up to
// date; the CPU profile covers neither collection.
func profileRun(b *testing.B, name string, measured bool) (stop func()) {
	if *runProfiles == "" || !measured {
		return func() {}
	}
	if err := os.MkdirAll(*runProfiles, 0o755); err != nil {
		b.Fatal(err)
	}
	prefix := filepath.Join(*runProfiles, strings.ReplaceAll(name, " ", "_"))
	writeAllocs(b, prefix+"-allocs-start.pprof")
	f, err := os.Create(prefix + ".pprof")
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatalf("%s: %v (-run-profiles does not go with -cpuprofile)", name, err)
	}
	return sync.OnceFunc(func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			b.Error(err)
		}
		writeAllocs(b, prefix+"-allocs.pprof")
	})
}

// writeAllocs writes the process's allocation profile after a collection; a run's own allocations
// are the difference of its two
// (go tool pprof -sample_index=alloc_space -diff_base <name>-allocs-start.pprof <name>-allocs.pprof).
func writeAllocs(b *testing.B, path string) {
	runtime.GC()
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		b.Error(err)
	}
	if err := f.Close(); err != nil {
		b.Error(err)
	}
}
