package accounting

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned/fake"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// A cycle stored by two concurrent re-parentings makes its queues, and the queues below it, Unknown
// with the cycle named; a pod of a queue in the cycle is counted once in each total.
func TestCycleMakesQueuesUnknown(t *testing.T) {
	a := newTestAccounting(t, []runtime.Object{
		util.MakeQueue("a").Parent("b").Obj(),
		util.MakeQueue("b").Parent("a").Obj(),
		util.MakeQueue("below").Parent("a").Obj(),
		util.MakeQueue("orphan").Parent("gone").Obj(),
		util.MakeQueue("fine").Obj(),
	}, util.MakeNode("n", "8", "8Gi"),
		util.MakePod("ns", "p").Label(schedulingv1beta1.QueueLabel, "a").Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Node("n").Obj())
	for _, tt := range []struct {
		queue string
		want  TreeFault
	}{
		{"a", TreeFault{Reason: ParentCycle, Detail: "its parent chain is a cycle: a -> b -> a"}},
		{"b", TreeFault{Reason: ParentCycle, Detail: "its parent chain is a cycle: b -> a -> b"}},
		{"below", TreeFault{Reason: ParentCycle, Detail: "its parent chain is a cycle: a -> b -> a"}},
		{"orphan", TreeFault{Reason: ParentMissing, Detail: `its parent queue "gone" does not exist`}},
		{"fine", TreeFault{}},
	} {
		q, _ := a.Store.Queue(tt.queue)
		if diff := cmp.Diff(tt.want, a.Store.TreeFaultOf(q)); diff != "" {
			t.Errorf("queue %s (-want,+got):\n%s", tt.queue, diff)
		}
		wantState := schedulingv1beta1.QueueStateUnknown
		if tt.want.Reason == "" {
			wantState = schedulingv1beta1.QueueStateOpen
		}
		if got := a.Store.SchedulingState(q); got != wantState {
			t.Errorf("queue %s: scheduling state %s, want %s", tt.queue, got, wantState)
		}
	}
	for _, name := range []string{"a", "b"} {
		held := a.subtreeAllocated(name)
		if got := held.Cpu().MilliValue(); got != 1000 {
			t.Errorf("subtree of %s holds %dm cpu, want the pod's 1000m once", name, got)
		}
	}
}

// A queue's selector is parsed once per generation and decides which namespaces it takes work from.
func TestNamespaceRefusal(t *testing.T) {
	selected := &v1.Namespace{}
	selected.Name, selected.Labels = "in", map[string]string{"team": "a"}
	other := &v1.Namespace{}
	other.Name = "out"
	team := util.MakeQueue("team").Namespaces(map[string]string{"team": "a"}).Obj()
	team.UID, team.Generation = "uid-team", 1
	a := newTestAccounting(t, []runtime.Object{
		team,
		util.MakeQueue("all").Obj(),
		util.MakeQueue("none").NoNamespaces().Obj(),
	}, selected, other)
	for _, tt := range []struct {
		queue, namespace string
		refused          bool
	}{
		{"team", "in", false}, {"team", "out", true}, {"team", "unknown-yet", true},
		{"all", "out", false}, {"all", "unknown-yet", false},
		{"none", "in", true},
	} {
		q, _ := a.Store.Queue(tt.queue)
		if got := a.Store.NamespaceRefusal(q, tt.namespace); (got != "") != tt.refused {
			t.Errorf("queue %s, namespace %s: refusal %q, want refused %t", tt.queue, tt.namespace, got, tt.refused)
		}
	}
	// The cached selector of an unchanged queue is what is read; a new generation is parsed again.
	q, _ := a.Store.Queue("team")
	if _, err := a.Store.selectors.of(q); err != nil {
		t.Fatal(err)
	}
	a.Store.selectors.mu.Lock()
	a.Store.selectors.parsed["team"] = parsedSelector{uid: q.UID, generation: q.Generation, selector: labels.Nothing()}
	a.Store.selectors.mu.Unlock()
	if got := a.Store.NamespaceRefusal(q, "in"); got == "" {
		t.Errorf("the selector of an unchanged queue was parsed again")
	}
	changed := q.DeepCopy()
	changed.Generation++
	if got := a.Store.NamespaceRefusal(changed, "in"); got != "" {
		t.Errorf("a new generation kept the old selector: %s", got)
	}
}

// The version of the queues' specs changes with a spec change, and with a queue deleted and another
// created at the same generation, which leave the sum of the generations as it was.
func TestQueueSpecsVersionTellsEveryChange(t *testing.T) {
	ctx := context.Background()
	a := util.MakeQueue("a").Obj()
	a.UID, a.Generation = "uid-a", 1
	// The fake client's watch sees only the changes made after it starts: the steps wait for it, or
	// a change made before is never seen.
	client := fake.NewSimpleClientset(a)
	watching := make(chan struct{})
	client.PrependWatchReactor("queues", func(action clienttesting.Action) (bool, watch.Interface, error) {
		w, err := client.Tracker().Watch(action.GetResource(), action.GetNamespace())
		close(watching)
		return true, w, err
	})
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	acct, err := Start(ctx, client, informers.NewSharedInformerFactory(kubefake.NewClientset(), 0), Config{})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-watching:
	case <-time.After(wait.ForeverTestTimeout):
		t.Fatal("the queues were never watched")
	}
	seen := map[int64]string{acct.queueSpecsVersion(): "queue a at generation 1"}
	b := util.MakeQueue("b").Obj()
	b.UID, b.Generation = "uid-b", 1
	queues := acct.Client.SchedulingV1beta1().Queues()
	for _, step := range []struct {
		what   string
		change func() error
	}{
		{"queue a deleted", func() error { return queues.Delete(ctx, "a", metav1.DeleteOptions{}) }},
		{"queue b created at generation 1", func() error { _, err := queues.Create(ctx, b, metav1.CreateOptions{}); return err }},
		{"queue b at generation 2", func() error {
			b.Generation = 2
			_, err := queues.Update(ctx, b, metav1.UpdateOptions{})
			return err
		}},
	} {
		before := acct.queueSpecsVersion()
		if err := step.change(); err != nil {
			t.Fatal(err)
		}
		if err := wait.PollUntilContextTimeout(ctx, time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
			return acct.queueSpecsVersion() != before, nil
		}); err != nil {
			t.Fatalf("%s: the version stayed %d", step.what, before)
		}
		if earlier, ok := seen[acct.queueSpecsVersion()]; ok {
			t.Errorf("%s: the version is the one of %s", step.what, earlier)
		}
		seen[acct.queueSpecsVersion()] = step.what
	}
}

// A queue's tree is its top-level ancestor and every queue below it; a cycle or a missing parent
// ends the climb.
func TestTreeOf(t *testing.T) {
	a := newTestAccounting(t, []runtime.Object{util.MakeQueue("root").Obj(), util.MakeQueue("org").Obj(),
		util.MakeQueue("team").Parent("org").Obj(), util.MakeQueue("sub").Parent("team").Obj(),
		util.MakeQueue("sibling").Parent("org").Obj(), util.MakeQueue("other").Obj(),
		util.MakeQueue("orphan").Parent("gone").Obj(),
		util.MakeQueue("x").Parent("y").Obj(), util.MakeQueue("y").Parent("x").Obj()})
	for queue, want := range map[string][]string{
		"sub":    {"org", "sibling", "sub", "team"},
		"org":    {"org", "sibling", "sub", "team"},
		"other":  {"other"},
		"orphan": {"orphan"},
		"x":      {"x", "y"},
		"absent": {"absent"},
	} {
		got := a.Store.TreeOf(queue)
		slices.Sort(got)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("TreeOf(%s) (-want,+got):\n%s", queue, diff)
		}
	}
}

// With a capability on the root, every queue's reservation counts against it: every queue is of one
// tree.
func TestTreeOfUnderACappedRoot(t *testing.T) {
	a := newTestAccounting(t, []runtime.Object{util.MakeQueue("root").Capability(map[v1.ResourceName]string{v1.ResourceCPU: "10"}).Obj(),
		util.MakeQueue("org").Obj(), util.MakeQueue("team").Parent("org").Obj(), util.MakeQueue("other").Obj()})
	got := a.Store.TreeOf("team")
	slices.Sort(got)
	if diff := cmp.Diff([]string{"org", "other", "root", "team"}, got); diff != "" {
		t.Errorf("TreeOf(team) under a capped root (-want,+got):\n%s", diff)
	}
}
