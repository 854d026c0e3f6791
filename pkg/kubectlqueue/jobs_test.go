package kubectlqueue

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

func controlledBy(kind, apiVersion, name string) []metav1.OwnerReference {
	return []metav1.OwnerReference{{Kind: kind, APIVersion: apiVersion, Name: name, Controller: ptr.To(true)}}
}

func queuePod(name, node string, labels map[string]string, owners []metav1.OwnerReference) v1.Pod {
	return v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: labels, OwnerReferences: owners},
		Spec: v1.PodSpec{NodeName: node}, Status: v1.PodStatus{Phase: v1.PodPending}}
}

func batchJobOf(name string, owners []metav1.OwnerReference) batchv1.Job {
	return batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, OwnerReferences: owners},
		Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](2)}}
}

// The rows of a queue's pods and Jobs: a gang's pods (labelled, or naming another API's PodGroup)
// show as their PodGroup while it is listed, and on their own when it is missing; a Job's pods as the Job; the Jobs and pods a QueueUnit queues,
// directly or through the object that owns the Job (a JobSet), as the unit; other pods alone.
func TestPodsAndJobs(t *testing.T) {
	gang := map[string]string{schedulingv1beta1.PodGroupLabel: "gang"}
	orphan := map[string]string{schedulingv1beta1.PodGroupLabel: "missing"}
	w := &work{
		groups: []schedulingv1beta1.PodGroup{{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gang"}}},
		pods: []v1.Pod{
			queuePod("gang-0", "n1", gang, nil),
			queuePod("early-0", "", orphan, nil),
			queuePod("sweep-0", "n1", nil, controlledBy("Job", "batch/v1", "sweep")),
			queuePod("sweep-1", "", nil, controlledBy("Job", "batch/v1", "sweep")),
			queuePod("queued-0", "n1", nil, controlledBy("Job", "batch/v1", "queued")),
			queuePod("set-job-0", "n1", nil, controlledBy("Job", "batch/v1", "set-job")),
			queuePod("web-0", "n2", nil, controlledBy("ReplicaSet", "apps/v1", "web")),
		},
		jobs: []batchv1.Job{
			batchJobOf("sweep", nil),
			batchJobOf("queued", nil),
			batchJobOf("set-job", controlledBy("JobSet", "jobset.x-k8s.io/v1alpha2", "set")),
		},
	}
	// A pod that came past the webhook names its native PodGroup without the pod-group label.
	native := queuePod("gang-1", "n1", nil, nil)
	native.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: ptr.To("gang")}
	w.pods = append(w.pods, native)
	w.pods[3].Status.Conditions = []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionFalse, Message: "queue \"q\" is Suspended"}}
	consumers := map[owner]bool{{namespace: "ns", kind: "Job", name: "queued"}: true, {namespace: "ns", kind: "JobSet", name: "set"}: true}
	var got []string
	for _, j := range podsAndJobs(w, "q", consumers) {
		got = append(got, j.kind+" "+j.name+" "+j.phase+" "+j.members+" "+j.waiting)
	}
	want := []string{
		"Pod early-0 Pending 0/1 ",
		"Pod web-0 Pending 1/1 ",
		`Job sweep Running 1/2 queue "q" is Suspended`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows (-want,+got):\n%s", diff)
	}
}

// A waiting gang's row says when its reservation starts, rather than why it could not start yet;
// once the reservation is let go, why it waits again.
func TestPodGroupRowSaysItsReservation(t *testing.T) {
	pg := schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "big"}}
	pg.Status.Conditions = []metav1.Condition{
		{Type: schedulingv1beta1.PodGroupUnschedulable, Status: metav1.ConditionTrue, Message: "2/2 tasks in gang unschedulable"},
		{Type: schedulingv1beta1.PodGroupReserved, Status: metav1.ConditionTrue, Message: "room reserved on 2 node(s) (a, b), from 2026-11-27T12:00:00Z for 1h0m0s"},
	}
	if got := podGroupJob(&pg).waiting; got != pg.Status.Conditions[1].Message {
		t.Errorf("reserved: waiting %q, want the reservation", got)
	}
	pg.Status.Conditions[1].Status, pg.Status.Conditions[1].Message = metav1.ConditionFalse, "the reserved room was free … lapsed"
	if got := podGroupJob(&pg).waiting; got != pg.Status.Conditions[0].Message {
		t.Errorf("lapsed: waiting %q, want why it is unschedulable", got)
	}
}
