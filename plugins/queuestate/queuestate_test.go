package queuestate

import (
	"context"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/utils/clock"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting/accountingtest"
	"github.com/queue-scheduler/queue-scheduler/pkg/holdreport"
	"github.com/queue-scheduler/queue-scheduler/pkg/podindex"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// newTestPlugin builds the plugin on an accounting fed by fake clients holding objs.
func newTestPlugin(t *testing.T, namespaces []runtime.Object, objs ...runtime.Object) *QueueState {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	kube := kubefake.NewClientset(namespaces...)
	acct, factory := accountingtest.Start(ctx, t, kube, objs...)
	pods := factory.Core().V1().Pods().Lister()
	p := &QueueState{acct: acct, Holder: &holdreport.Holder{Held: podindex.New(), Reporter: holdreport.New(kube, pods, &events.FakeRecorder{}, clock.RealClock{})}}
	return p
}

func namespace(name, queue string) *v1.Namespace {
	ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if queue != "" {
		ns.Annotations = map[string]string{schedulingv1beta1.QueueAnnotation: queue}
	}
	return ns
}

func TestPreEnqueue(t *testing.T) {
	queues := []runtime.Object{
		util.MakeQueue("default").Obj(),
		util.MakeQueue("open").Obj(),
		util.MakeQueue("suspended").State(schedulingv1beta1.QueueStateSuspended).Obj(),
		util.MakeQueue("closed").State(schedulingv1beta1.QueueStateClosed).Obj(),
		util.MakeQueue("closing").State(schedulingv1beta1.QueueStateClosed).StatusState(schedulingv1beta1.QueueStateClosing).Obj(),
		util.MakeQueue("unknown").Parent("gone").Obj(),
		util.MakeQueue("stale").StatusState(schedulingv1beta1.QueueStateUnknown).Obj(),
		util.MakeQueue("resumed").State(schedulingv1beta1.QueueStateOpen).StatusState(schedulingv1beta1.QueueStateOpen).Obj(),
		util.MakeQueue("team-only").Namespaces(map[string]string{"team": "yes"}).Obj(),
		util.MakeQueue("nobody").NoNamespaces().Obj(),
		util.MakeQueue("cycle-a").Parent("cycle-b").Obj(),
		util.MakeQueue("cycle-b").Parent("cycle-a").Obj(),
		util.MakePodGroup("ns", "pg-suspended").Queue("suspended").Obj(),
		util.MakePodGroup("team", "pg-namespace-queue").Obj(),
	}
	selected := namespace("selected", "")
	selected.Labels = map[string]string{"team": "yes"}
	namespaces := []runtime.Object{namespace("ns", ""), namespace("team", "suspended"), selected}
	tests := []struct {
		name       string
		pod        *v1.Pod
		wantReason string
	}{
		{name: "open queue by label", pod: util.MakePod("ns", "p").Label(schedulingv1beta1.QueueLabel, "open").Obj()},
		{name: "no queue goes to default", pod: util.MakePod("ns", "p").Obj()},
		{name: "closed queue schedules what it has", pod: util.MakePod("ns", "p").Label(schedulingv1beta1.QueueLabel, "closed").Obj()},
		{name: "closing queue schedules what it has", pod: util.MakePod("ns", "p").Label(schedulingv1beta1.QueueLabel, "closing").Obj()},
		{name: "status wins over spec", pod: util.MakePod("ns", "p").Label(schedulingv1beta1.QueueLabel, "resumed").Obj()},
		{
			name:       "suspended queue by label",
			pod:        util.MakePod("ns", "p").Label(schedulingv1beta1.QueueLabel, "suspended").Obj(),
			wantReason: `queue "suspended" is Suspended: no new resources are allocated`,
		},
		{
			name:       "suspended queue by namespace annotation",
			pod:        util.MakePod("team", "p").Obj(),
			wantReason: `queue "suspended" is Suspended: no new resources are allocated`,
		},
		{
			name:       "suspended queue through the PodGroup",
			pod:        util.MakePod("ns", "p").Label(schedulingv1beta1.PodGroupLabel, "pg-suspended").Label(schedulingv1beta1.QueueLabel, "open").Obj(),
			wantReason: `queue "suspended" is Suspended: no new resources are allocated`,
		},
		{
			name:       "PodGroup without queue takes the namespace's",
			pod:        util.MakePod("team", "p").Label(schedulingv1beta1.PodGroupLabel, "pg-namespace-queue").Obj(),
			wantReason: `queue "suspended" is Suspended: no new resources are allocated`,
		},
		{
			name:       "unknown queue",
			pod:        util.MakePod("ns", "p").Label(schedulingv1beta1.QueueLabel, "unknown").Obj(),
			wantReason: `queue "unknown" is Unknown: its parent queue "gone" does not exist`,
		},
		// Status is a view of the accounting, never its input.
		{name: "Unknown in status only", pod: util.MakePod("ns", "p").Label(schedulingv1beta1.QueueLabel, "stale").Obj()},
		{
			name:       "missing queue",
			pod:        util.MakePod("ns", "p").Label(schedulingv1beta1.QueueLabel, "nope").Obj(),
			wantReason: `queue "nope" does not exist`,
		},
		{
			name:       "root is no submission target",
			pod:        util.MakePod("ns", "p").Label(schedulingv1beta1.QueueLabel, "root").Obj(),
			wantReason: `queue "root" is the root of the queue hierarchy: it takes no work`,
		},
		{name: "a queue selecting the namespace", pod: util.MakePod("selected", "p").Label(schedulingv1beta1.QueueLabel, "team-only").Obj()},
		{
			name:       "a queue not selecting the namespace",
			pod:        util.MakePod("ns", "p").Label(schedulingv1beta1.QueueLabel, "team-only").Obj(),
			wantReason: `queue "team-only" does not accept work from namespace "ns": its spec.namespaceSelector "team=yes" does not select the namespace's labels`,
		},
		{
			name:       "a queue without a selector",
			pod:        util.MakePod("selected", "p").Label(schedulingv1beta1.QueueLabel, "nobody").Obj(),
			wantReason: `queue "nobody" does not accept work from namespace "selected": it has no spec.namespaceSelector, so it accepts no namespace's work`,
		},
		{
			name:       "a queue in a cycle",
			pod:        util.MakePod("ns", "p").Label(schedulingv1beta1.QueueLabel, "cycle-a").Obj(),
			wantReason: `queue "cycle-a" is Unknown: its parent chain is a cycle: cycle-a -> cycle-b -> cycle-a`,
		},
		{
			name:       "missing PodGroup",
			pod:        util.MakePod("ns", "p").Label(schedulingv1beta1.PodGroupLabel, "nope").Obj(),
			wantReason: `PodGroup "nope" of pod ns/p does not exist`,
		},
	}
	p := newTestPlugin(t, namespaces, queues...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status := p.PreEnqueue(context.Background(), tt.pod)
			if tt.wantReason == "" {
				if !status.IsSuccess() {
					t.Fatalf("PreEnqueue: got %v, want success", status)
				}
				return
			}
			if status.Code() != fwk.UnschedulableAndUnresolvable {
				t.Fatalf("PreEnqueue code: got %v, want UnschedulableAndUnresolvable", status.Code())
			}
			if diff := cmp.Diff(tt.wantReason, status.Message()); diff != "" {
				t.Errorf("PreEnqueue message (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestPreEnqueueTracksHeldPods(t *testing.T) {
	p := newTestPlugin(t, []runtime.Object{namespace("ns", "")},
		util.MakeQueue("suspended").State(schedulingv1beta1.QueueStateSuspended).Obj(),
		util.MakeQueue("open").Obj())
	pod := util.MakePod("ns", "p").Label(schedulingv1beta1.QueueLabel, "suspended").Obj()
	p.PreEnqueue(context.Background(), pod)
	if got := p.Held.Names(queueBucket("suspended")); len(got) != 1 {
		t.Fatalf("held for suspended: got %v, want the pod", got)
	}
	pod.Labels[schedulingv1beta1.QueueLabel] = "open"
	if status := p.PreEnqueue(context.Background(), pod); !status.IsSuccess() {
		t.Fatalf("PreEnqueue: got %v, want success", status)
	}
	if got := p.Held.Names(queueBucket("suspended")); len(got) != 0 {
		t.Errorf("held for suspended after the pod was let in: got %v, want none", got)
	}
}

// activations records the pods a plugin activates.
type activations struct {
	mu   sync.Mutex
	pods []string
}

func (a *activations) activate(_ klog.Logger, pods map[string]*v1.Pod) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for name := range pods {
		a.pods = append(a.pods, name)
	}
}

func (a *activations) take() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := a.pods
	a.pods = nil
	sort.Strings(out)
	return out
}

// TestPreEnqueueIndexesBeforeItChecks checks that a held pod is found under what can end its hold,
// whatever the check found: its PodGroup for a gang member (missing group or held queue alike), its
// queue otherwise.
func TestPreEnqueueIndexesBeforeItChecks(t *testing.T) {
	p := newTestPlugin(t, []runtime.Object{namespace("ns", "")},
		util.MakeQueue("suspended").State(schedulingv1beta1.QueueStateSuspended).Obj(),
		util.MakePodGroup("ns", "held").Queue("suspended").Obj())
	tests := []struct {
		name string
		pod  *v1.Pod
		want string
	}{
		{"PodGroup missing", util.MakePod("ns", "a").Label(schedulingv1beta1.PodGroupLabel, "late").Obj(), podGroupBucket("ns", "late")},
		{"PodGroup of a suspended queue", util.MakePod("ns", "b").Label(schedulingv1beta1.PodGroupLabel, "held").Obj(), podGroupBucket("ns", "held")},
		{"suspended queue", util.MakePod("ns", "c").Label(schedulingv1beta1.QueueLabel, "suspended").Obj(), queueBucket("suspended")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if status := p.PreEnqueue(context.Background(), tt.pod); status.IsSuccess() {
				t.Fatal("PreEnqueue let the pod in")
			}
			want := []types.NamespacedName{{Namespace: "ns", Name: tt.pod.Name}}
			if diff := cmp.Diff(want, p.Held.Names(tt.want)); diff != "" {
				t.Errorf("held under %s (-want,+got):\n%s", tt.want, diff)
			}
		})
	}
}

// TestQueueChangesActivateHeldPods checks what the accounting's queue and PodGroup events bring
// back: a queue resumed brings its pods and its PodGroups' pods; a queue created brings its
// children's pods; a queue whose hold did not change, nothing.
func TestQueueChangesActivateHeldPods(t *testing.T) {
	p := newTestPlugin(t, []runtime.Object{namespace("ns", "")},
		util.MakeQueue("team").State(schedulingv1beta1.QueueStateSuspended).Obj(),
		util.MakeQueue("child").Parent("parent").Obj(),
		util.MakePodGroup("ns", "pg").Queue("team").Obj())
	var got activations
	p.Activator = got.activate
	for _, pod := range []*v1.Pod{
		util.MakePod("ns", "plain").Label(schedulingv1beta1.QueueLabel, "team").Obj(),
		util.MakePod("ns", "member").Label(schedulingv1beta1.PodGroupLabel, "pg").Obj(),
		util.MakePod("ns", "orphan").Label(schedulingv1beta1.QueueLabel, "child").Obj(),
		util.MakePod("ns", "missing").Label(schedulingv1beta1.PodGroupLabel, "later").Obj(),
	} {
		if status := p.PreEnqueue(context.Background(), pod); status.IsSuccess() {
			t.Fatalf("PreEnqueue let %s in", pod.Name)
		}
	}
	suspended := util.MakeQueue("team").State(schedulingv1beta1.QueueStateSuspended).Obj()
	p.onQueue(suspended, false, false)
	if diff := cmp.Diff([]string(nil), got.take()); diff != "" {
		t.Errorf("queue still suspended (-want,+got):\n%s", diff)
	}
	p.onQueue(util.MakeQueue("team").Obj(), true, false)
	if diff := cmp.Diff([]string{"ns/member", "ns/plain"}, got.take()); diff != "" {
		t.Errorf("queue resumed (-want,+got):\n%s", diff)
	}
	parent := util.MakeQueue("parent").Obj()
	if err := p.acct.Store.QueueInformer().GetIndexer().Add(parent); err != nil {
		t.Fatal(err)
	}
	p.onQueue(parent, true, true)
	if diff := cmp.Diff([]string{"ns/orphan"}, got.take()); diff != "" {
		t.Errorf("parent created (-want,+got):\n%s", diff)
	}
}

func TestEventsToRegister(t *testing.T) {
	p := newTestPlugin(t, nil)
	events, err := p.EventsToRegister(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 0 {
		t.Errorf("events: got %v, want none: the accounting's informers bring held pods back", events)
	}
}

// The accounting's informers drive the activation: a queue resumed through the API brings back its
// held pods, and a PodGroup created brings back the pods that named it.
func TestInformerEventsActivateHeldPods(t *testing.T) {
	p := newTestPlugin(t, []runtime.Object{namespace("ns", "")},
		util.MakeQueue("team").State(schedulingv1beta1.QueueStateSuspended).Obj())
	var got activations
	p.Activator = got.activate
	if err := p.watch(); err != nil {
		t.Fatal(err)
	}
	for _, pod := range []*v1.Pod{
		util.MakePod("ns", "plain").Label(schedulingv1beta1.QueueLabel, "team").Obj(),
		util.MakePod("ns", "member").Label(schedulingv1beta1.PodGroupLabel, "later").Obj(),
	} {
		if status := p.PreEnqueue(context.Background(), pod); status.IsSuccess() {
			t.Fatalf("PreEnqueue let %s in", pod.Name)
		}
	}
	ctx := context.Background()
	api := p.acct.Client.SchedulingV1beta1()
	if _, err := api.Queues().Update(ctx, util.MakeQueue("team").Obj(), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitActivated(t, &got, "ns/plain")
	if _, err := api.PodGroups("ns").Create(ctx, util.MakePodGroup("ns", "later").Queue("team").Obj(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitActivated(t, &got, "ns/member")
}

func waitActivated(t *testing.T, got *activations, pod string) {
	t.Helper()
	var seen []string
	err := wait.PollUntilContextTimeout(context.Background(), time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		seen = append(seen, got.take()...)
		return slices.Contains(seen, pod), nil
	})
	if err != nil {
		t.Fatalf("%s never activated; activated %v", pod, seen)
	}
}

// A queue that turns Suspended sends its pods that wait in the scheduler's queue after an attempt
// (PreEnqueue let them in, a later check turned them away) back to PreEnqueue, which now holds them
// and says why; a queue whose hold did not change sends nothing.
func TestSuspendingBringsTriedPodsBackToTheirHold(t *testing.T) {
	tried := util.MakePod("ns", "tried").UID("tried").Label(schedulingv1beta1.QueueLabel, "team").Obj()
	p := newTestPlugin(t, []runtime.Object{namespace("ns", ""), tried}, util.MakeQueue("team").Obj())
	var got activations
	p.Activator = got.activate
	if err := wait.PollUntilContextTimeout(context.Background(), time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return len(p.acct.Pods.WaitingPods()["team"]) == 1, nil
	}); err != nil {
		t.Fatal("the pod was never counted as waiting")
	}
	if status := p.PreEnqueue(context.Background(), tried); !status.IsSuccess() {
		t.Fatalf("PreEnqueue held the pod of an open queue: %v", status)
	}
	p.onQueue(util.MakeQueue("team").Obj(), false, false)
	if diff := cmp.Diff([]string(nil), got.take()); diff != "" {
		t.Errorf("queue still open (-want,+got):\n%s", diff)
	}
	p.onQueue(util.MakeQueue("team").State(schedulingv1beta1.QueueStateSuspended).Obj(), true, false)
	if diff := cmp.Diff([]string{"ns/tried"}, got.take()); diff != "" {
		t.Errorf("queue suspended (-want,+got):\n%s", diff)
	}
}
