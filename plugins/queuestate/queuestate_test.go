package queuestate

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned/fake"
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
	factory := informers.NewSharedInformerFactory(kube, 0)
	acct, err := accounting.Start(ctx, fake.NewSimpleClientset(objs...), factory)
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	pods := factory.Core().V1().Pods().Lister()
	p := &QueueState{acct: acct, Holder: &holdreport.Holder{Held: podindex.New(), Reporter: holdreport.New(kube, pods, &events.FakeRecorder{})}}
	p.reason = p.holdReason
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
		util.MakeQueue("unknown").StatusState(schedulingv1beta1.QueueStateUnknown).Obj(),
		util.MakeQueue("resumed").State(schedulingv1beta1.QueueStateOpen).StatusState(schedulingv1beta1.QueueStateOpen).Obj(),
		util.MakePodGroup("ns", "pg-suspended").Queue("suspended").Obj(),
		util.MakePodGroup("team", "pg-namespace-queue").Obj(),
	}
	namespaces := []runtime.Object{namespace("ns", ""), namespace("team", "suspended")}
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
			wantReason: `queue "unknown" is Unknown: no new work is scheduled until its state is known`,
		},
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

// A PodGroup that reaches the accounting's cache between PreEnqueue's check and the hold finds no pod
// to activate: PreEnqueue checks again once the pod is held, and lets it in.
func TestPreEnqueueChecksAgainOnceHeld(t *testing.T) {
	p := newTestPlugin(t, []runtime.Object{namespace("ns", "")}, util.MakeQueue("open").Obj())
	pod := util.MakePod("ns", "p").Label(schedulingv1beta1.PodGroupLabel, "late").Obj()
	checks := 0
	p.reason = func(pod *v1.Pod) (string, string) {
		checks++
		if checks == 1 {
			return podGroupBucket("ns", "late"), `PodGroup "late" of pod ns/p does not exist`
		}
		return queueBucket("open"), ""
	}
	if status := p.PreEnqueue(context.Background(), pod); !status.IsSuccess() {
		t.Fatalf("PreEnqueue: got %v, want success once the PodGroup is there", status)
	}
	if got := p.Held.Names(podGroupBucket("ns", "late")); len(got) != 0 {
		t.Errorf("still held for the PodGroup: %v", got)
	}
}

// toUnstructured gives an object the form the scheduler's dynamic informers deliver.
func toUnstructured(t *testing.T, obj any) *unstructured.Unstructured {
	t.Helper()
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: content}
}

func TestIsSchedulableAfterQueueChange(t *testing.T) {
	p := newTestPlugin(t, []runtime.Object{namespace("ns", "team")})
	pod := util.MakePod("ns", "p").Obj()
	labelled := util.MakePod("ns", "p").Label(schedulingv1beta1.QueueLabel, "other").Obj()
	tests := []struct {
		name    string
		pod     *v1.Pod
		newObj  any
		want    fwk.QueueingHint
		wantErr bool
	}{
		{name: "own queue resumed", pod: pod, newObj: util.MakeQueue("team").Obj(), want: fwk.Queue},
		{name: "own queue resumed, unstructured", pod: pod, newObj: toUnstructured(t, util.MakeQueue("team").Obj()), want: fwk.Queue},
		{name: "own queue closed", pod: pod, newObj: util.MakeQueue("team").State(schedulingv1beta1.QueueStateClosed).Obj(), want: fwk.Queue},
		{name: "own queue still suspended", pod: pod, newObj: util.MakeQueue("team").State(schedulingv1beta1.QueueStateSuspended).Obj(), want: fwk.QueueSkip},
		{name: "own queue unknown", pod: pod, newObj: util.MakeQueue("team").StatusState(schedulingv1beta1.QueueStateUnknown).Obj(), want: fwk.QueueSkip},
		{name: "another queue", pod: labelled, newObj: util.MakeQueue("team").Obj(), want: fwk.QueueSkip},
		{name: "not a queue", pod: pod, newObj: &v1.Node{}, want: fwk.Queue, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logger, _ := ktesting.NewTestContext(t)
			got, err := p.isSchedulableAfterQueueChange(logger, tt.pod, nil, tt.newObj)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error: got %v, want error %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("hint: got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestIsSchedulableAfterPodGroupAdd(t *testing.T) {
	p := newTestPlugin(t, []runtime.Object{namespace("ns", "")})
	member := util.MakePod("ns", "p").Label(schedulingv1beta1.PodGroupLabel, "pg").Obj()
	tests := []struct {
		name   string
		newObj any
		want   fwk.QueueingHint
	}{
		{name: "its PodGroup", newObj: util.MakePodGroup("ns", "pg").Obj(), want: fwk.Queue},
		{name: "its PodGroup, unstructured", newObj: toUnstructured(t, util.MakePodGroup("ns", "pg").Obj()), want: fwk.Queue},
		{name: "same name in another namespace", newObj: util.MakePodGroup("other", "pg").Obj(), want: fwk.QueueSkip},
		{name: "another PodGroup", newObj: util.MakePodGroup("ns", "other").Obj(), want: fwk.QueueSkip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logger, _ := ktesting.NewTestContext(t)
			got, err := p.isSchedulableAfterPodGroupAdd(logger, member, nil, tt.newObj)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("hint: got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPreQueueingHintsNarrowToHeldPods(t *testing.T) {
	p := newTestPlugin(t, []runtime.Object{namespace("ns", "")})
	p.Held.Add(util.MakePod("ns", "a").Obj(), queueBucket("team"))
	p.Held.Add(util.MakePod("ns", "b").Obj(), queueBucket("other"))
	p.Held.Add(util.MakePod("ns", "c").Obj(), podGroupBucket("ns", "pg"))
	logger, _ := ktesting.NewTestContext(t)

	byQueue, err := p.podsHeldByQueue(logger, nil, toUnstructured(t, util.MakeQueue("team").Obj()))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fwk.PreQueueingHintResult{Pods: []types.NamespacedName{{Namespace: "ns", Name: "a"}}}, byQueue); diff != "" {
		t.Errorf("queue event (-want,+got):\n%s", diff)
	}
	byGroup, err := p.podsHeldByPodGroup(logger, nil, util.MakePodGroup("ns", "pg").Obj())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fwk.PreQueueingHintResult{Pods: []types.NamespacedName{{Namespace: "ns", Name: "c"}}}, byGroup); diff != "" {
		t.Errorf("PodGroup event (-want,+got):\n%s", diff)
	}
	all, err := p.podsHeldByQueue(logger, nil, "garbage")
	if err == nil || !all.AllPods {
		t.Errorf("unreadable object: got %+v, %v; want all pods and an error", all, err)
	}
}

func TestEventsToRegister(t *testing.T) {
	p := newTestPlugin(t, nil)
	events, err := p.EventsToRegister(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[fwk.EventResource]fwk.ActionType{}
	for _, e := range events {
		if e.QueueingHintFn == nil || e.PreQueueingHintFn == nil {
			t.Errorf("event %v has no hint", e.Event)
		}
		got[e.Event.Resource] = e.Event.ActionType
	}
	want := map[fwk.EventResource]fwk.ActionType{
		"queues.v1beta1.scheduling.queue-scheduler.io":    fwk.Add | fwk.Update,
		"podgroups.v1beta1.scheduling.queue-scheduler.io": fwk.Add,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want,+got):\n%s", diff)
	}
}
