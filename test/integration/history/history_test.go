package history

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/history"
	"github.com/queue-scheduler/queue-scheduler/pkg/queueclient"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// waitCheckpoint waits until queue's status holds a usage checkpoint taken at after or later.
func waitCheckpoint(t *testing.T, queue string, after time.Time) {
	t.Helper()
	var got *schedulingv1beta1.UsageCheckpoint
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		q, err := cluster.Queues.SchedulingV1beta1().Queues().Get(ctx, queue, metav1.GetOptions{})
		if err != nil || q.Status.Usage == nil {
			return false, nil
		}
		got = q.Status.Usage
		return !got.Time.Time.Before(after.Truncate(time.Second)), nil
	})
	if err != nil {
		t.Fatalf("queue %s has no usage checkpoint taken after %s: last %+v", queue, after, got)
	}
}

// A scheduler that starts resumes each queue's usage from the checkpoint in its status, decayed to
// the present, with what the queue holds counted as held since: within one checkpoint interval of
// what the running scheduler counts.
func TestUsageResumesFromItsCheckpoint(t *testing.T) {
	withQueues(t, "used")
	before := time.Now()
	submit(t, "used", 0, 4, "1")
	waitBound(t, "4 cpus in used", names("used", 4)...)
	bound := time.Now()
	waitCheckpoint(t, "used", bound.Add(4*time.Second))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client, err := queueclient.New(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	kube := informers.NewSharedInformerFactory(cluster.Kube, 0)
	restarted, err := accounting.Start(ctx, client, kube, accounting.Config{History: settings})
	if err != nil {
		t.Fatal(err)
	}
	kube.Start(ctx.Done())
	var used history.Usage
	err = wait.PollUntilContextTimeout(ctx, util.PollInterval, settle, true, func(context.Context) (bool, error) {
		var ok bool
		used, ok = restarted.History.Remembered("used")
		return ok, nil
	})
	if err != nil {
		t.Fatal("the restarted accounting never knew the queue's usage")
	}
	now := time.Now()
	// 4 cpus held since between before and bound, and charged a minute each on entry; an hour's
	// half-life takes off less than 0.2% over the test's seconds, which the slack covers.
	lowest := 4*now.Sub(bound).Seconds() + 4*settings.EntryCharge.Seconds()
	highest := 4*now.Sub(before).Seconds() + 4*settings.EntryCharge.Seconds()
	got := used.ResourceSeconds[v1.ResourceCPU]
	if missed := 4*(usageCheckpoint+time.Second).Seconds() + 2; got < lowest-missed || got > highest+2 {
		t.Errorf("the restarted accounting resumed at %.1f cpu-seconds; the queue used between %.1f and %.1f, and a restart may miss %.1f",
			got, lowest, highest, missed)
	}
}

// Two queues borrow alike; one ran longer. A queue below its share takes back from the one that
// used more, although its pods started earlier (which otherwise go last).
func TestReclaimTakesFromTheQueueThatUsedMore(t *testing.T) {
	withQueues(t, "early", "late", "owner")
	submit(t, "early", 0, 6, "5")
	waitBound(t, "30 cpus in early", names("early", 6)...)
	waitCheckpoint(t, "early", time.Now().Add(3*time.Second))
	submit(t, "late", 0, 6, "5")
	waitBound(t, "30 cpus in late", names("late", 6)...)
	borrowers := livePods(t)
	// The owner asks for its share, 20 cpus, with a pod no node can hold beside its 5-cpu one: each
	// borrower is then about 10 above its share (early, which used more, a little more), and one
	// 5-cpu pod is all the owner can take back.
	submit(t, "owner", 0, 1, "5")
	submit(t, "owner", 1, 1, "15")
	waitBound(t, "the owner's 5-cpu pod", "owner-0")
	var victims []string
	for name := range borrowers {
		if _, live := livePods(t)[name]; !live {
			victims = append(victims, name)
		}
	}
	slices.Sort(victims)
	if len(victims) != 1 || !strings.HasPrefix(victims[0], "early-") {
		t.Errorf("evicted %v: want one pod of early, which used more", victims)
	}
}

// The runtimes learned of a queue's finished pods are checkpointed into its status by kind and by
// shape, with their mean, and the API server takes the shapes: three pods of 1 cpu that ran five
// minutes are in the queue's runtimes of kind Pod, and in their shape, at a mean between the
// moment they were written finished and the moment it is read.
func TestRuntimesAreCheckpointedByShape(t *testing.T) {
	withQueues(t, "ran")
	submit(t, "ran", 0, 3, "1")
	waitBound(t, "3 pods of 1 cpu in ran", names("ran", 3)...)
	ctx := context.Background()
	pods := cluster.Kube.CoreV1().Pods(ns)
	start := metav1.NewTime(time.Now().Add(-5 * time.Minute).Truncate(time.Second))
	// A run ends when the scheduler sees its pod leave: after this, before the checkpoint is read.
	least := time.Since(start.Time)
	for _, name := range names("ran", 3) {
		for _, phase := range []v1.PodPhase{v1.PodRunning, v1.PodSucceeded} {
			pod, err := pods.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			pod.Status.Phase, pod.Status.StartTime = phase, &start
			if _, err := pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var last *schedulingv1beta1.RuntimesCheckpoint
	err := wait.PollUntilContextTimeout(ctx, util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		q, err := cluster.Queues.SchedulingV1beta1().Queues().Get(ctx, "ran", metav1.GetOptions{})
		if err != nil || q.Status.Runtimes == nil {
			return false, nil
		}
		last = q.Status.Runtimes
		for _, k := range last.Kinds {
			if k.Kind == "Pod" && len(k.Shapes) == 1 && strings.HasPrefix(k.Shapes[0].Shape, "cpu=1000m,") && runs(k.Shapes[0].Buckets) == 3000 {
				most := time.Since(start.Time)
				return runs(k.Buckets) == 3000 && meanWithin(k.Buckets, least, most) && meanWithin(k.Shapes[0].Buckets, least, most), nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("the queue's runtimes never held its 3 runs of kind Pod, in one shape of 1 cpu: last %+v", last)
	}
}

// meanWithin says whether the runs in buckets ran from least to most on average.
func meanWithin(buckets []schedulingv1beta1.RuntimeBucket, least, most time.Duration) bool {
	for _, b := range buckets {
		if mean := time.Duration(b.MeanMilliseconds) * time.Millisecond; mean < least.Truncate(time.Millisecond) || mean > most {
			return false
		}
	}
	return len(buckets) > 0
}

// runs counts the runs in buckets, in thousandths.
func runs(buckets []schedulingv1beta1.RuntimeBucket) int64 {
	var n int64
	for _, b := range buckets {
		n += b.MilliRuns
	}
	return n
}
