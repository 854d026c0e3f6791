package gangsource

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingapi "k8s.io/api/scheduling/v1beta1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	spv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"
	vcv1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

func pods(phases ...corev1.PodPhase) []*corev1.Pod {
	out := make([]*corev1.Pod, len(phases))
	for i, phase := range phases {
		out[i] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", OwnerReferences: []metav1.OwnerReference{{Name: "job-b"}, {Name: "job-a"}}},
			Status: corev1.PodStatus{Phase: phase}}
	}
	return out
}

func mirrorIn(phase schedulingv1beta1.PodGroupPhase) *schedulingv1beta1.PodGroup {
	return &schedulingv1beta1.PodGroup{Status: schedulingv1beta1.PodGroupStatus{Phase: phase}}
}

func TestSchedulerPluginsStatus(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	const P, R, S, F = corev1.PodPending, corev1.PodRunning, corev1.PodSucceeded, corev1.PodFailed
	tests := []struct {
		name    string
		was     spv1alpha1.PodGroupPhase
		mirror  *schedulingv1beta1.PodGroup
		members []*corev1.Pod
		want    spv1alpha1.PodGroupPhase
	}{
		{name: "no mirror", mirror: nil, members: pods(P, P, P), want: spv1alpha1.PodGroupPending},
		{name: "not admitted by its queue", mirror: mirrorIn(schedulingv1beta1.PodGroupPending), members: pods(P, P, P), want: spv1alpha1.PodGroupPending},
		{name: "admitted, too few pods", mirror: mirrorIn(schedulingv1beta1.PodGroupInqueue), members: pods(P, P), want: spv1alpha1.PodGroupPending},
		{name: "admitted, all pods", mirror: mirrorIn(schedulingv1beta1.PodGroupInqueue), members: pods(P, P, P), want: spv1alpha1.PodGroupScheduling},
		{name: "running", mirror: mirrorIn(schedulingv1beta1.PodGroupRunning), members: pods(R, R, S), want: spv1alpha1.PodGroupRunning},
		{name: "a member failed", mirror: mirrorIn(schedulingv1beta1.PodGroupRunning), members: pods(R, R, F), want: spv1alpha1.PodGroupFailed},
		{name: "finished", mirror: mirrorIn(schedulingv1beta1.PodGroupCompleted), members: pods(S, S, S), want: spv1alpha1.PodGroupFinished},
		{name: "finished stays", was: spv1alpha1.PodGroupFinished, mirror: mirrorIn(schedulingv1beta1.PodGroupUnknown), members: pods(P), want: spv1alpha1.PodGroupFinished},
	}
	for _, tt := range tests {
		pg := &spv1alpha1.PodGroup{Spec: spv1alpha1.PodGroupSpec{MinMember: 3}, Status: spv1alpha1.PodGroupStatus{Phase: tt.was}}
		got := schedulerPluginsStatus(pg, Mirror{PodGroup: tt.mirror, Members: tt.members, Now: now})
		if got.Phase != tt.want {
			t.Errorf("%s: phase %q, want %q", tt.name, got.Phase, tt.want)
		}
		if tt.was == "" && len(tt.members) > 0 && got.OccupiedBy != "ns/job-a,ns/job-b" {
			t.Errorf("%s: occupiedBy %q", tt.name, got.OccupiedBy)
		}
		if started := got.ScheduleStartTime.Time; (tt.want == spv1alpha1.PodGroupScheduling) != started.Equal(now) {
			t.Errorf("%s: scheduleStartTime %v", tt.name, started)
		}
	}
}

func TestVolcanoStatus(t *testing.T) {
	mirror := mirrorIn(schedulingv1beta1.PodGroupInqueue)
	mirror.Status.Running = 1
	mirror.Status.Conditions = []metav1.Condition{{Type: schedulingv1beta1.PodGroupUnschedulable, Status: metav1.ConditionTrue,
		Reason: "NotEnoughResources", Message: "2/3 tasks in gang unschedulable: 0/2 nodes are available"}}
	pg := &vcv1beta1.PodGroup{Status: vcv1beta1.PodGroupStatus{Phase: vcv1beta1.PodGroupPending}}
	// The conditions' times are the scheduler's clock's, handed over with the mirror.
	now := time.Date(2026, 11, 29, 7, 0, 0, 0, time.UTC)
	got := volcanoStatus(pg, Mirror{PodGroup: mirror, Now: now})
	if got.Phase != vcv1beta1.PodGroupInqueue || got.Running != 1 || len(got.Conditions) != 1 {
		t.Fatalf("got %+v", got)
	}
	if c := got.Conditions[0]; c.Type != vcv1beta1.PodGroupUnschedulableType || c.Status != corev1.ConditionTrue || c.Reason != "NotEnoughResources" ||
		c.Message != mirror.Status.Conditions[0].Message || !c.LastTransitionTime.Time.Equal(now) {
		t.Errorf("condition %+v", c)
	}
	pg.Status = got
	if again := volcanoStatus(pg, Mirror{PodGroup: mirror, Now: now.Add(time.Minute)}); again.Conditions[0].LastTransitionTime != got.Conditions[0].LastTransitionTime {
		t.Errorf("an unchanged condition moved its transition time")
	}
	refused := volcanoStatus(&vcv1beta1.PodGroup{}, Mirror{Refusal: `queue "q" does not take namespace "ns"`})
	if refused.Phase != vcv1beta1.PodGroupPending || refused.Conditions[0].Reason != "NotAdmitted" || refused.Conditions[0].Message != `queue "q" does not take namespace "ns"` {
		t.Errorf("refused: %+v", refused)
	}
}

func TestKubernetesMirror(t *testing.T) {
	k := &kubernetesSource{}
	gang := &schedulingapi.PodGroup{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{schedulingv1beta1.QueueLabel: "team"}},
		Spec: schedulingapi.PodGroupSpec{PriorityClassName: "high", SchedulingPolicy: schedulingapi.PodGroupSchedulingPolicy{Gang: &schedulingapi.GangSchedulingPolicy{MinCount: 4}}}}
	if got := k.Mirror(gang); got.MinMember != 4 || got.Queue != "team" || got.PriorityClassName != "high" {
		t.Errorf("gang policy: %+v", got)
	}
	basic := &schedulingapi.PodGroup{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{schedulingv1beta1.QueueAnnotation: "other"}},
		Spec: schedulingapi.PodGroupSpec{SchedulingPolicy: schedulingapi.PodGroupSchedulingPolicy{Basic: &schedulingapi.BasicSchedulingPolicy{}}}}
	if got := k.Mirror(basic); got.MinMember != 1 || got.Queue != "other" {
		t.Errorf("basic policy: %+v, want no gang (minMember 1) in the annotation's queue", got)
	}
}

func TestQueueAdmitted(t *testing.T) {
	notAdmitted := mirrorIn(schedulingv1beta1.PodGroupPending)
	notAdmitted.Status.Conditions = []metav1.Condition{{Type: schedulingv1beta1.PodGroupUnschedulable, Status: metav1.ConditionTrue,
		Reason: "NotAdmitted", Message: "minResources do not fit"}}
	for _, tt := range []struct {
		name   string
		m      Mirror
		status metav1.ConditionStatus
		reason string
	}{
		{"no mirror yet", Mirror{}, metav1.ConditionFalse, "Pending"},
		{"refused", Mirror{Refusal: "queue does not take the namespace"}, metav1.ConditionFalse, "NotAdmitted"},
		{"waiting for room", Mirror{PodGroup: notAdmitted}, metav1.ConditionFalse, "NotAdmitted"},
		{"admitted", Mirror{PodGroup: mirrorIn(schedulingv1beta1.PodGroupInqueue), Queue: "q"}, metav1.ConditionTrue, "Admitted"},
		{"running", Mirror{PodGroup: mirrorIn(schedulingv1beta1.PodGroupRunning), Queue: "q"}, metav1.ConditionTrue, "Admitted"},
	} {
		got := queueAdmitted(tt.m)
		if got.Type != QueueAdmittedCondition || got.Status != tt.status || got.Reason != tt.reason || got.Message == "" {
			t.Errorf("%s: %+v", tt.name, got)
		}
	}
}

// Volcano's PodGroup gives its mirror minMember, minTaskMember, minResources, queue and
// priorityClassName; one that names no queue goes to the PodGroup's queue label.
func TestVolcanoMirror(t *testing.T) {
	cpu := corev1.ResourceList{corev1.ResourceCPU: apiresource.MustParse("3")}
	pg := &vcv1beta1.PodGroup{Spec: vcv1beta1.PodGroupSpec{MinMember: 3, Queue: "team", PriorityClassName: "high",
		MinTaskMember: map[string]int32{"ps": 1, "worker": 2}, MinResources: &cpu}}
	got := (&volcano{}).Mirror(pg)
	want := schedulingv1beta1.PodGroupSpec{MinMember: 3, Queue: "team", PriorityClassName: "high",
		MinTaskMember: map[string]int32{"ps": 1, "worker": 2}, MinResources: cpu}
	if !apiequality.Semantic.DeepEqual(got, want) {
		t.Errorf("mirror spec %+v, want %+v", got, want)
	}
	pg.Spec.MinTaskMember["ps"] = 5
	if got.MinTaskMember["ps"] != 1 {
		t.Error("the mirror's minTaskMember shares the source's map")
	}
	bare := &vcv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{schedulingv1beta1.QueueLabel: "labelled"}}}
	if got := (&volcano{}).Mirror(bare); got.MinMember != 1 || got.Queue != "labelled" || got.MinTaskMember != nil {
		t.Errorf("bare Volcano PodGroup: %+v, want minMember 1 in the label's queue", got)
	}
}
