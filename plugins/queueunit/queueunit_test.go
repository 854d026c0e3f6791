package queueunit

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/utils/clock"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting/accountingtest"
	"github.com/queue-scheduler/queue-scheduler/pkg/holdreport"
	"github.com/queue-scheduler/queue-scheduler/pkg/podindex"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// newTestPlugin builds the plugin on an accounting fed by fake clients holding the queue objects.
func newTestPlugin(t *testing.T, objs ...runtime.Object) *QueueUnit {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	kube := kubefake.NewClientset()
	acct, factory := accountingtest.Start(ctx, t, kube, objs...)
	pods := factory.Core().V1().Pods().Lister()
	return &QueueUnit{acct: acct, Holder: &holdreport.Holder{Held: podindex.New(), Reporter: holdreport.New(kube, pods, &events.FakeRecorder{}, clock.RealClock{})}}
}

func jobPod(name, job string) *v1.Pod {
	p := util.MakePod("ns", name).Obj()
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job, UID: "uid-" + types.UID(job)}}
	return p
}

func unitFor(job string, phase schedulingv1beta1.QueueUnitPhase, message string) *schedulingv1beta1.QueueUnit {
	u := util.MakeQueueUnit("ns", job, "q", job).Obj()
	u.Status = schedulingv1beta1.QueueUnitStatus{Phase: phase, Message: message}
	return u
}

func TestPreEnqueue(t *testing.T) {
	p := newTestPlugin(t,
		unitFor("waiting", schedulingv1beta1.QueueUnitEnqueued, "resource does not fit: no room"),
		unitFor("new", "", ""),
		unitFor("admitted", schedulingv1beta1.QueueUnitDequeued, "dequeued"),
	)
	for _, tt := range []struct {
		name, job, want string
	}{
		{"a pod of an Enqueued unit waits, with the unit's reason", "waiting", "QueueUnit ns/waiting is Enqueued: the job's pods wait until it is dequeued (resource does not fit: no room)"},
		{"a unit the controller has not looked at yet holds too", "new", "QueueUnit ns/new is Enqueued: the job's pods wait until it is dequeued"},
		{"a pod of a Dequeued unit goes on", "admitted", ""},
		{"a pod without a unit goes on", "unqueued", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pod := jobPod("p-"+tt.job, tt.job)
			_, ctx := ktesting.NewTestContext(t)
			status := p.PreEnqueue(ctx, pod)
			if tt.want == "" {
				if !status.IsSuccess() {
					t.Fatalf("PreEnqueue = %v, want success", status)
				}
				if len(p.Held.Names("ns/"+tt.job)) != 0 {
					t.Error("a pod let in is still indexed as held")
				}
				return
			}
			if status.Code() != fwk.UnschedulableAndUnresolvable || status.Message() != tt.want {
				t.Fatalf("PreEnqueue = %v %q, want UnschedulableAndUnresolvable %q", status.Code(), status.Message(), tt.want)
			}
			if got := p.Held.Names(accounting.UnitKey(unitFor(tt.job, "", ""))); len(got) != 1 || got[0].Name != pod.Name {
				t.Errorf("held for the unit: %v, want [%s]", got, pod.Name)
			}
		})
	}
}

// TestUnitEventsActivateHeldPods checks what the accounting's QueueUnit events bring back: the
// pods of a unit dequeued or deleted, and nothing while it stays Enqueued.
func TestUnitEventsActivateHeldPods(t *testing.T) {
	p := newTestPlugin(t, unitFor("waiting", schedulingv1beta1.QueueUnitEnqueued, "no room"))
	var activated []string
	p.Activator = func(_ klog.Logger, pods map[string]*v1.Pod) {
		for name := range pods {
			activated = append(activated, name)
		}
	}
	if status := p.PreEnqueue(context.Background(), jobPod("held", "waiting")); status.IsSuccess() {
		t.Fatal("the pod of an Enqueued unit was let in")
	}
	p.onUnit(unitFor("waiting", schedulingv1beta1.QueueUnitEnqueued, "still no room"))
	if len(activated) != 0 {
		t.Errorf("unit still Enqueued: activated %v", activated)
	}
	p.onUnit(unitFor("elsewhere", schedulingv1beta1.QueueUnitDequeued, ""))
	if len(activated) != 0 {
		t.Errorf("another unit dequeued: activated %v", activated)
	}
	p.onUnit(unitFor("waiting", schedulingv1beta1.QueueUnitDequeued, ""))
	if diff := cmp.Diff([]string{"ns/held"}, activated); diff != "" {
		t.Errorf("unit dequeued (-want,+got):\n%s", diff)
	}
}
