package integration

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/utils/ptr"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned"
	"github.com/queue-scheduler/queue-scheduler/pkg/holdreport"
	"github.com/queue-scheduler/queue-scheduler/pkg/kubectlqueue"
	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// A tenant reads where its own pending work stands in its queue, through the API server's
// aggregation layer and its RBAC, and nothing of another tenant's; the view follows binds, deletes
// and suspension as they happen, and its positions are the order the scheduler takes the work in.
func TestLiveViewShowsATenantItsOwnPendingWorkInOrder(t *testing.T) {
	admin := waitViewServed(t)
	const queue = "view-capped"
	createQueue(t, util.MakeQueue(queue).Capability(map[v1.ResourceName]string{v1.ResourceCPU: "2"}).Obj())
	own, other := newNamespace(t, "own", nil), newNamespace(t, "other", nil)
	running := createPods(t, own, "running", 2, queuePod(own, queue))
	waitBound(t, own, running)
	waiting := map[string][]string{
		own:   createPods(t, own, "wait", 2, queuePod(own, queue)),
		other: createPods(t, other, "wait", 1, queuePod(other, queue)),
	}
	for ns, names := range waiting {
		waitReason(t, ns, names, holdreport.QueueCapability)
	}
	order := schedulerOrder(t, waiting)

	_, tenant := as(t, "view-tenant")
	bind(t, own, "view", "view-tenant", authorizationv1.ResourceAttributes{Namespace: own, Verb: "list",
		Group: visibilityv1beta1.GroupName, Resource: visibilityv1beta1.PendingWorkloads})
	mine, err := tenant.VisibilityV1beta1().PendingWorkloads(own).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("the tenant lists its namespace's pending work: %v", err)
	}
	wantPending(t, "the tenant's namespace", mine.Items, order, own, holdreport.QueueCapability)

	_, err = tenant.VisibilityV1beta1().PendingWorkloads(other).List(context.Background(), metav1.ListOptions{})
	wantForbidden(t, "another namespace's pending work", err)
	_, err = tenant.VisibilityV1beta1().PendingWorkloads("").List(context.Background(), metav1.ListOptions{})
	wantForbidden(t, "every namespace's pending work", err)
	_, err = tenant.VisibilityV1beta1().QueueSummaries().GetPendingWorkloads(context.Background(), queue, metav1.GetOptions{})
	wantForbidden(t, "the queue's pending work in every namespace", err)
	// kubectl queue eta, as the tenant: its own pod's expected start, and a refusal for another's.
	if out, err := etaAs(t, "view-tenant", own, waiting[own][0]); err != nil || !strings.Contains(out, "pod/"+waiting[own][0]) {
		t.Errorf("the tenant's eta of its own pod: %v\n%s", err, out)
	}
	if out, err := etaAs(t, "view-tenant", other, waiting[other][0]); err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Errorf("the tenant's eta of another namespace's pod: %v\n%s; want it forbidden", err, out)
	}

	all, err := admin.VisibilityV1beta1().QueueSummaries().GetPendingWorkloads(context.Background(), queue, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantPending(t, "the queue", all.Items, order, "", holdreport.QueueCapability)
	wantSummary(t, admin, queue, "after the binds", func(s *visibilityv1beta1.QueueSummary) bool {
		return s.State == schedulingv1beta1.QueueStateOpen && s.RunningPods == 2 && s.PendingPods == 3 &&
			cpu(s.Allocated) == 2000 && cpu(s.Requested) == 3000 && cpu(s.Capability) == 2000
	})

	// A running pod leaves: the work at position 1 is the one that binds, and the rest move up.
	if err := cluster.Kube.CoreV1().Pods(own).Delete(context.Background(), running[0], metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	first := order[0]
	waitBound(t, first.Namespace, []string{first.Name})
	waitPending(t, admin, queue, order[1:])
	wantSummary(t, admin, queue, "after a delete", func(s *visibilityv1beta1.QueueSummary) bool {
		return s.RunningPods == 2 && s.PendingPods == 2 && cpu(s.Allocated) == 2000 && cpu(s.Requested) == 2000
	})

	setQueueState(t, queue, schedulingv1beta1.QueueStateSuspended)
	wantSummary(t, admin, queue, "after suspension", func(s *visibilityv1beta1.QueueSummary) bool {
		return s.State == schedulingv1beta1.QueueStateSuspended && s.PendingPods == 2
	})
	err = wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		mine, err = tenant.VisibilityV1beta1().PendingWorkloads(own).List(ctx, metav1.ListOptions{})
		return err == nil && len(mine.Items) > 0 && !slices.ContainsFunc(mine.Items, func(w visibilityv1beta1.PendingWorkload) bool {
			return w.Reason != holdreport.QueueSuspended
		}), nil
	})
	if err != nil {
		t.Fatalf("the tenant's pending work does not say the queue is suspended: %v", mine)
	}
}

// waitViewServed waits until the API server routes the live view to the scheduler, and returns a
// client of it with full rights.
func waitViewServed(t *testing.T) versioned.Interface {
	t.Helper()
	admin := cluster.Queues
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		_, err := admin.VisibilityV1beta1().QueueSummaries().List(ctx, metav1.ListOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("the live view is not served through the API server within %s", settle)
	}
	return admin
}

// waitReason waits until the pods are held with the reason.
func waitReason(t *testing.T, namespace string, names []string, reason string) {
	t.Helper()
	err := util.WaitForPods(context.Background(), cluster.Kube, namespace, names, settle, "held with "+reason, func(pod *v1.Pod) bool {
		c := util.PodScheduledCondition(pod)
		return pod.Spec.NodeName == "" && c != nil && c.Reason == reason
	})
	if err != nil {
		t.Fatal(err)
	}
}

// schedulerOrder is the waiting pods in the order the scheduler takes pods of one priority: the
// older first, then by namespace and name.
func schedulerOrder(t *testing.T, waiting map[string][]string) []metav1.ObjectMeta {
	t.Helper()
	var pods []metav1.ObjectMeta
	for ns, names := range waiting {
		for _, name := range names {
			pods = append(pods, getPod(t, ns, name).ObjectMeta)
		}
	}
	place := func(m metav1.ObjectMeta) policy.Place {
		return policy.Place{Since: m.CreationTimestamp.Time, Namespace: m.Namespace, Name: m.Name}
	}
	slices.SortFunc(pods, func(a, b metav1.ObjectMeta) int {
		if policy.Ahead(place(a), place(b)) {
			return -1
		}
		return 1
	})
	return pods
}

// wantPending checks the view's pending work against the order, kept to namespace unless it is "".
func wantPending(t *testing.T, what string, got []visibilityv1beta1.PendingWorkload, order []metav1.ObjectMeta, namespace, reason string) {
	t.Helper()
	var want []string
	for i, m := range order {
		if namespace == "" || m.Namespace == namespace {
			want = append(want, fmt.Sprintf("%s/pod.%s at %d: %s", m.Namespace, m.Name, i+1, reason))
		}
	}
	var have []string
	for _, w := range got {
		have = append(have, fmt.Sprintf("%s/%s at %d: %s", w.Namespace, w.Name, w.PositionInQueue, w.Reason))
		if w.Workload.Kind != visibilityv1beta1.WorkloadPod || w.Pods != 1 || cpu(w.Requests) != 1000 {
			t.Errorf("%s: %+v; want a pod asking for 1 CPU", what, w)
		}
	}
	if !slices.Equal(have, want) {
		t.Errorf("%s: pending %q; want %q", what, have, want)
	}
}

// waitPending waits until the queue's pending pods are those of order, numbered from 1.
func waitPending(t *testing.T, admin versioned.Interface, queue string, order []metav1.ObjectMeta) {
	t.Helper()
	var want []string
	for i, m := range order {
		want = append(want, fmt.Sprintf("%s/pod.%s@%d", m.Namespace, m.Name, i+1))
	}
	waitPendingList(t, admin, queue, fmt.Sprint(want), func(pending []visibilityv1beta1.PendingWorkload) bool {
		var have []string
		for _, w := range pending {
			have = append(have, fmt.Sprintf("%s/%s@%d", w.Namespace, w.Name, w.PositionInQueue))
		}
		return slices.Equal(have, want)
	})
}

// waitPendingList waits until the queue's pending work, as the live view lists it, satisfies ok;
// want says what is waited for.
func waitPendingList(t *testing.T, admin versioned.Interface, queue, want string, ok func([]visibilityv1beta1.PendingWorkload) bool) {
	t.Helper()
	var last []string
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		list, err := admin.VisibilityV1beta1().QueueSummaries().GetPendingWorkloads(ctx, queue, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = last[:0]
		for _, w := range list.Items {
			last = append(last, fmt.Sprintf("%s/%s@%d", w.Namespace, w.Name, w.PositionInQueue))
		}
		return ok(list.Items), nil
	})
	if err != nil {
		t.Fatalf("queue %s pending %v; want %s", queue, last, want)
	}
}

// wantSummary waits until the queue's summary satisfies ok and its numbers agree with the pods the
// API server holds. The view is eventually consistent: a summary that satisfies ok may not have seen
// every pod yet (a share can reach its value before the last pod is counted), so both are waited for.
func wantSummary(t *testing.T, admin versioned.Interface, queue, when string, ok func(*visibilityv1beta1.QueueSummary) bool) {
	t.Helper()
	var s *visibilityv1beta1.QueueSummary
	var held podCounts
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		var err error
		if s, err = admin.VisibilityV1beta1().QueueSummaries().Get(ctx, queue, metav1.GetOptions{}); err != nil || !ok(s) {
			return false, nil
		}
		held, err = podsHeld(ctx, queue)
		return err == nil && held == summaryCounts(s), nil
	})
	if err != nil {
		t.Fatalf("queue %s %s: summary %+v; it says %+v, the API server holds %+v", queue, when, s, summaryCounts(s), held)
	}
}

// podCounts are a queue's pods as the summary counts them: bound, pending and the CPU bound.
type podCounts struct {
	running, pending int32
	allocated        int64
}

func summaryCounts(s *visibilityv1beta1.QueueSummary) podCounts {
	if s == nil {
		return podCounts{}
	}
	return podCounts{running: s.RunningPods, pending: s.PendingPods, allocated: cpu(s.Allocated)}
}

// podsHeld counts the queue's pods the API server holds, those being deleted left out.
func podsHeld(ctx context.Context, queue string) (podCounts, error) {
	pods, err := cluster.Kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: schedulingv1beta1.QueueLabel + "=" + queue})
	if err != nil {
		return podCounts{}, err
	}
	var c podCounts
	for _, p := range pods.Items {
		switch {
		case p.DeletionTimestamp != nil:
		case p.Spec.NodeName != "":
			c.running++
			c.allocated += cpu(resourcehelper.PodRequests(&p, resourcehelper.PodResourcesOptions{}))
		default:
			c.pending++
		}
	}
	return c, nil
}

func cpu(list v1.ResourceList) int64 { return list.Cpu().MilliValue() }

// A watch of queuesummaries, through the aggregation layer, is sent each change of a queue as it
// happens: binds, a delete, suspension, a queue added and deleted. It resumes from the version of
// any event it was sent; a version the view does not hold is 410 Gone, and its client lists again.
// Watching takes the watch verb, which the shipped viewer role grants.
func TestLiveViewWatchFollowsTheQueues(t *testing.T) {
	waitViewServed(t)
	const queue = "view-watched"
	_, tenant := as(t, "watch-tenant")
	_, err := tenant.VisibilityV1beta1().QueueSummaries().Watch(context.Background(), metav1.ListOptions{})
	wantForbidden(t, "a watch of the queues without a role", err)
	bind(t, "", "queue-scheduler-queue-viewer", "watch-tenant", authorizationv1.ResourceAttributes{Verb: "watch",
		Group: visibilityv1beta1.GroupName, Resource: visibilityv1beta1.QueueSummaries})

	list, err := tenant.VisibilityV1beta1().QueueSummaries().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := tenant.VisibilityV1beta1().QueueSummaries().Watch(context.Background(), metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatalf("a watch from the list's version: %v", err)
	}
	defer w.Stop()
	createQueue(t, util.MakeQueue(queue).Capability(map[v1.ResourceName]string{v1.ResourceCPU: "2"}).Obj())
	added := waitEvent(t, w, "the new queue", func(e watch.Event, s *visibilityv1beta1.QueueSummary) bool {
		return e.Type == watch.Added && s.Name == queue
	})
	ns := newNamespace(t, "watched", nil)
	pods := createPods(t, ns, "p", 3, queuePod(ns, queue))
	waitEvent(t, w, "two bound, one held by the capability", func(e watch.Event, s *visibilityv1beta1.QueueSummary) bool {
		return s.Name == queue && s.RunningPods == 2 && s.PendingPods == 1 && cpu(s.Allocated) == 2000 && cpu(s.Requested) == 1000
	})
	if err := cluster.Kube.CoreV1().Pods(ns).Delete(context.Background(), pods[0], metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, w, "the held pod bound after a delete", func(e watch.Event, s *visibilityv1beta1.QueueSummary) bool {
		return s.Name == queue && s.RunningPods == 2 && s.PendingPods == 0 && cpu(s.Allocated) == 2000
	})
	setQueueState(t, queue, schedulingv1beta1.QueueStateSuspended)
	waitEvent(t, w, "suspended", func(e watch.Event, s *visibilityv1beta1.QueueSummary) bool {
		return e.Type == watch.Modified && s.Name == queue && s.State == schedulingv1beta1.QueueStateSuspended
	})

	// From the version of the Added event on, a new watch is sent the changes since, in order.
	resumed, err := tenant.VisibilityV1beta1().QueueSummaries().Watch(context.Background(), metav1.ListOptions{
		ResourceVersion: added.ResourceVersion, FieldSelector: "metadata.name=" + queue})
	if err != nil {
		t.Fatalf("a watch from the version of an event: %v", err)
	}
	defer resumed.Stop()
	waitEvent(t, resumed, "suspended, again from the history", func(e watch.Event, s *visibilityv1beta1.QueueSummary) bool {
		return s.State == schedulingv1beta1.QueueStateSuspended
	})
	_, err = tenant.VisibilityV1beta1().QueueSummaries().Watch(context.Background(), metav1.ListOptions{ResourceVersion: "1"})
	if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		t.Errorf("a watch from a version the view does not hold: %v, want 410 Gone", err)
	}
	// A streaming list (sendInitialEvents), as newer clients start: every queue, then the bookmark
	// that ends them.
	streamed, err := tenant.VisibilityV1beta1().QueueSummaries().Watch(context.Background(), metav1.ListOptions{
		SendInitialEvents: ptr.To(true), AllowWatchBookmarks: true, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
	if err != nil {
		t.Fatalf("a streaming list of the queues: %v", err)
	}
	defer streamed.Stop()
	seen := false
	waitEvent(t, streamed, "the end of the initial events", func(e watch.Event, s *visibilityv1beta1.QueueSummary) bool {
		seen = seen || (e.Type == watch.Added && s.Name == queue && s.State == schedulingv1beta1.QueueStateSuspended)
		return e.Type == watch.Bookmark && s.Annotations[metav1.InitialEventsAnnotationKey] == "true"
	})
	if !seen {
		t.Errorf("the streaming list did not start with queue %s as it is", queue)
	}
	const gone = "view-watched-gone"
	createQueue(t, util.MakeQueue(gone).Obj())
	waitEvent(t, w, "another queue added", func(e watch.Event, s *visibilityv1beta1.QueueSummary) bool {
		return e.Type == watch.Added && s.Name == gone
	})
	setQueueState(t, gone, schedulingv1beta1.QueueStateClosed)
	err = wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		return cluster.Queues.SchedulingV1beta1().Queues().Delete(ctx, gone, metav1.DeleteOptions{}) == nil, nil
	})
	if err != nil {
		t.Fatalf("delete the closed queue %s: %v", gone, err)
	}
	waitEvent(t, w, "that queue deleted", func(e watch.Event, s *visibilityv1beta1.QueueSummary) bool {
		return e.Type == watch.Deleted && s.Name == gone
	})
}

// waitEvent reads w until an event satisfies ok, and returns its summary.
func waitEvent(t *testing.T, w watch.Interface, what string, ok func(watch.Event, *visibilityv1beta1.QueueSummary) bool) *visibilityv1beta1.QueueSummary {
	t.Helper()
	timeout := time.After(settle)
	var last []string
	for {
		select {
		case e, open := <-w.ResultChan():
			if !open {
				t.Fatalf("%s: the watch ended; events before: %v", what, last)
			}
			s, isSummary := e.Object.(*visibilityv1beta1.QueueSummary)
			if !isSummary {
				t.Fatalf("%s: a %s event of %T: %v", what, e.Type, e.Object, e.Object)
			}
			if ok(e, s) {
				return s
			}
			last = append(last, fmt.Sprintf("%s %s running=%d pending=%d state=%s", e.Type, s.Name, s.RunningPods, s.PendingPods, s.State))
		case <-timeout:
			t.Fatalf("%s: no such event within %s; events: %v", what, settle, last)
		}
	}
}

// etaAs runs kubectl queue eta NAME in namespace as user, in-process.
func etaAs(t *testing.T, user, namespace, name string) (string, error) {
	t.Helper()
	return kubectlQueueAs(t, user, "eta", name, "--namespace", namespace)
}

// kubectlQueueAs runs kubectl queue args... as user, in-process.
func kubectlQueueAs(t *testing.T, user string, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	cmd := kubectlqueue.NewCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out})
	cmd.SetArgs(append([]string{"--kubeconfig", cluster.Kubeconfig, "--as", user, "--as-group", "system:authenticated"}, args...))
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

// The live view says why a piece of work waits with the numbers of the queue's row, as they stand at
// the request: a pod held at the gate is not tried again until its hold may end, so its condition
// keeps the numbers it was held on while its queue's allocation moves.
func TestLiveViewHoldMessageAgreesWithTheRow(t *testing.T) {
	admin := waitViewServed(t)
	const queue = "view-numbers"
	createQueue(t, util.MakeQueue(queue).Capability(map[v1.ResourceName]string{v1.ResourceCPU: "4"}).Obj())
	ns := newNamespace(t, "", nil)
	waitBound(t, ns, createPods(t, ns, "running", 1, queuePod(ns, queue)))
	big := createPods(t, ns, "big", 1, func(name string) *v1.Pod {
		return util.MakePod(ns, name).Req(map[v1.ResourceName]string{v1.ResourceCPU: "4"}).Label(schedulingv1beta1.QueueLabel, queue).Obj()
	})
	const then = `queue "view-numbers" would exceed its capability of cpu: 1 allocated + 4 requested > 4`
	waitReason(t, ns, big, holdreport.QueueCapability)
	waitHeld(t, ns, big, then)
	// A pod placed by hand (as another scheduler or a restore would) takes more of the queue.
	createPods(t, ns, "placed", 2, func(name string) *v1.Pod {
		return util.MakePod(ns, name).Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Label(schedulingv1beta1.QueueLabel, queue).Node("node-0").Obj()
	})
	wantSummary(t, admin, queue, "with the placed pods", func(s *visibilityv1beta1.QueueSummary) bool {
		return cpu(s.Allocated) == 3000
	})
	const now = `queue "view-numbers" would exceed its capability of cpu: 3 allocated + 4 requested > 4`
	waitPendingList(t, admin, queue, "the held pod's message with 3 allocated", func(items []visibilityv1beta1.PendingWorkload) bool {
		return len(items) == 1 && items[0].Reason == holdreport.QueueCapability && items[0].Message == now
	})
	if out, err := util.KubectlQueue(context.Background(), cluster.Kubeconfig, "jobs", queue); err != nil || !strings.Contains(out, now) {
		t.Errorf("kubectl queue jobs: %v\n%s\nwant WAITING %q", err, out, now)
	}
	// What the view says is not a newer attempt's: the pod's condition still has the old numbers.
	if got := getPod(t, ns, big[0]); !util.HasUnschedulableMessage(then)(got) {
		t.Errorf("the held pod's condition changed: %v; the view's message must be its own", got.Status.Conditions)
	}
}
