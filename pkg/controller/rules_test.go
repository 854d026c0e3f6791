package controller

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	busv1alpha1 "github.com/queue-scheduler/queue-scheduler/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/gangs"
	"github.com/queue-scheduler/queue-scheduler/pkg/readmodel"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

const (
	open      = schedulingv1beta1.QueueStateOpen
	closing   = schedulingv1beta1.QueueStateClosing
	closed    = schedulingv1beta1.QueueStateClosed
	suspended = schedulingv1beta1.QueueStateSuspended
	unknown   = schedulingv1beta1.QueueStateUnknown
)

func TestDeriveState(t *testing.T) {
	missing := accounting.TreeFault{Reason: accounting.ParentMissing, Detail: `its parent queue "gone" does not exist`}
	cycle := accounting.TreeFault{Reason: accounting.ParentCycle, Detail: "its parent chain is a cycle: q -> p -> q"}
	tests := []struct {
		name  string
		queue *schedulingv1beta1.Queue
		fault accounting.TreeFault
		work  workCounts
		want  schedulingv1beta1.QueueState
	}{
		{name: "open", queue: util.MakeQueue("q").State(open).Obj(), want: open},
		{name: "no state is open", queue: util.MakeQueue("q").Obj(), want: open},
		{name: "suspended", queue: util.MakeQueue("q").State(suspended).Obj(), work: workCounts{pods: 3}, want: suspended},
		{name: "closed with a live pod is closing", queue: util.MakeQueue("q").State(closed).Obj(), work: workCounts{pods: 1}, want: closing},
		{name: "closed with a running PodGroup is closing", queue: util.MakeQueue("q").State(closed).Obj(), work: workCounts{WorkCounts: readmodel.WorkCounts{Running: 1}}, want: closing},
		{name: "closed with an enqueued unit is closing", queue: util.MakeQueue("q").State(closed).Obj(), work: workCounts{WorkCounts: readmodel.WorkCounts{Enqueued: 1}}, want: closing},
		{name: "closed with only finished work is closed", queue: util.MakeQueue("q").State(closed).Obj(), work: workCounts{WorkCounts: readmodel.WorkCounts{Completed: 4, Dequeued: 2}}, want: closed},
		{name: "missing parent is unknown", queue: util.MakeQueue("q").Parent("gone").Obj(), fault: missing, want: unknown},
		{name: "missing parent wins over suspended", queue: util.MakeQueue("q").Parent("gone").State(suspended).Obj(), fault: missing, want: unknown},
		{name: "a cycle is unknown", queue: util.MakeQueue("q").Parent("p").Obj(), fault: cycle, want: unknown},
		{name: "present parent", queue: util.MakeQueue("q").Parent("p").Obj(), want: open},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, reason, message := deriveState(tt.queue, tt.fault, tt.work)
			if got != tt.want {
				t.Errorf("state: got %s, want %s", got, tt.want)
			}
			if reason == "" || message == "" {
				t.Errorf("reason %q, message %q: want both", reason, message)
			}
		})
	}
}

func TestDecideCommand(t *testing.T) {
	queueIn := func(spec, status schedulingv1beta1.QueueState) *schedulingv1beta1.Queue {
		return util.MakeQueue("q").State(spec).StatusState(status).Obj()
	}
	tests := []struct {
		name    string
		action  busv1alpha1.Action
		queue   *schedulingv1beta1.Queue
		want    schedulingv1beta1.QueueState
		ignored bool
	}{
		{name: "open a closed queue", action: busv1alpha1.OpenQueue, queue: queueIn(closed, closed), want: open},
		{name: "open a suspended queue", action: busv1alpha1.OpenQueue, queue: queueIn(suspended, suspended), want: open},
		{name: "close an open queue", action: busv1alpha1.CloseQueue, queue: queueIn(open, open), want: closed},
		{name: "close a suspended queue", action: busv1alpha1.CloseQueue, queue: queueIn(suspended, suspended), want: closed},
		{name: "suspend an open queue", action: busv1alpha1.SuspendQueue, queue: queueIn(open, open), want: suspended},
		{name: "suspend a closing queue", action: busv1alpha1.SuspendQueue, queue: queueIn(closed, closing), want: suspended},
		{name: "suspend an unknown queue", action: busv1alpha1.SuspendQueue, queue: queueIn(open, unknown), want: suspended},
		{name: "suspend a closed queue is ignored", action: busv1alpha1.SuspendQueue, queue: queueIn(closed, closed), ignored: true},
		{name: "resume a suspended queue", action: busv1alpha1.ResumeQueue, queue: queueIn(suspended, suspended), want: open},
		{name: "resume a closed queue is ignored", action: busv1alpha1.ResumeQueue, queue: queueIn(closed, closed), ignored: true},
		{name: "resume an open queue is ignored", action: busv1alpha1.ResumeQueue, queue: queueIn(open, open), ignored: true},
		{name: "resume a closing queue is ignored", action: busv1alpha1.ResumeQueue, queue: queueIn(closed, closing), ignored: true},
		{name: "unknown action", action: "PauseQueue", queue: queueIn(open, open), ignored: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := decide(tt.action, tt.queue)
			if (o.ignored != "") != tt.ignored || o.apply == tt.ignored {
				t.Fatalf("outcome %+v: want ignored=%v", o, tt.ignored)
			}
			if !tt.ignored && o.state != tt.want {
				t.Errorf("state: got %s, want %s", o.state, tt.want)
			}
		})
	}
}

func member(phase v1.PodPhase, node string) *v1.Pod {
	pod := util.MakePod("ns", "m").Obj()
	pod.Status.Phase, pod.Spec.NodeName = phase, node
	return pod
}

// withTasks asks pg for one member of task ps.
func withTasks(pg *schedulingv1beta1.PodGroup) *schedulingv1beta1.PodGroup {
	pg.Spec.MinTaskMember = map[string]int32{"ps": 1}
	return pg
}

func task(pod *v1.Pod, name string) *v1.Pod {
	pod.Labels = map[string]string{schedulingv1beta1.TaskLabel: name}
	return pod
}

func TestPodGroupPhase(t *testing.T) {
	withPhase := func(p schedulingv1beta1.PodGroupPhase) *schedulingv1beta1.PodGroup {
		pg := util.MakePodGroup("ns", "pg").MinMember(2).Obj()
		pg.Status.Phase = p
		return pg
	}
	tests := []struct {
		name      string
		group     *schedulingv1beta1.PodGroup
		members   []*v1.Pod
		schedules bool
		want      schedulingv1beta1.PodGroupPhase
	}{
		{name: "new group in a suspended queue waits", group: withPhase(""), members: []*v1.Pod{member(v1.PodPending, "")}, want: schedulingv1beta1.PodGroupPending},
		{name: "new group in an open queue is admitted", group: withPhase(""), schedules: true, want: schedulingv1beta1.PodGroupInqueue},
		{name: "admitted stays admitted", group: withPhase(schedulingv1beta1.PodGroupInqueue), want: schedulingv1beta1.PodGroupInqueue},
		{name: "min members running", group: withPhase(schedulingv1beta1.PodGroupInqueue),
			members: []*v1.Pod{member(v1.PodRunning, "n"), member(v1.PodRunning, "n")}, want: schedulingv1beta1.PodGroupRunning},
		{name: "running below min is unknown", group: withPhase(schedulingv1beta1.PodGroupRunning),
			members: []*v1.Pod{member(v1.PodRunning, "n"), member(v1.PodFailed, "n")}, want: schedulingv1beta1.PodGroupUnknown},
		{name: "completed stays completed", group: withPhase(schedulingv1beta1.PodGroupCompleted), schedules: true,
			members: []*v1.Pod{member(v1.PodPending, "")}, want: schedulingv1beta1.PodGroupCompleted},
		{name: "all succeeded is completed", group: withPhase(schedulingv1beta1.PodGroupRunning),
			members: []*v1.Pod{member(v1.PodSucceeded, "n"), member(v1.PodSucceeded, "n")}, want: schedulingv1beta1.PodGroupCompleted},
		// The gang rule (gangs.Complete): a task's minimum counts as minMember does.
		{name: "min members running, a task's missing", group: withTasks(withPhase(schedulingv1beta1.PodGroupInqueue)),
			members: []*v1.Pod{task(member(v1.PodRunning, "n"), "worker"), task(member(v1.PodRunning, "n"), "worker")},
			want:    schedulingv1beta1.PodGroupInqueue},
		{name: "min members running, every task's made", group: withTasks(withPhase(schedulingv1beta1.PodGroupInqueue)),
			members: []*v1.Pod{task(member(v1.PodRunning, "n"), "ps"), task(member(v1.PodRunning, "n"), "worker")},
			want:    schedulingv1beta1.PodGroupRunning},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := podGroupPhase(tt.group, countMembers(tt.members), tt.schedules); got != tt.want {
				t.Errorf("phase: got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestCountMembers(t *testing.T) {
	deleting := member(v1.PodRunning, "n")
	deleting.DeletionTimestamp = &metav1.Time{}
	got := countMembers([]*v1.Pod{
		member(v1.PodPending, ""), member(v1.PodPending, "n"), member(v1.PodRunning, "n"),
		member(v1.PodSucceeded, "n"), member(v1.PodFailed, "n"), deleting,
	})
	want := memberCounts{pending: 1, bound: 2, running: 1, succeeded: 1, failed: 1,
		runningMembers: gangs.Members{All: 1}, succeededMembers: gangs.Members{All: 1}, scheduledMembers: gangs.Members{All: 4}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(memberCounts{})); diff != "" {
		t.Errorf("counts (-want,+got):\n%s", diff)
	}
}
