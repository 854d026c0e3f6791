package kubectlqueue

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned/fake"
)

func cpu(n string) v1.ResourceList { return v1.ResourceList{v1.ResourceCPU: resource.MustParse(n)} }

// The tables print what the live view says of a queue when it is served, in place of the status,
// which lags behind; a summary of another queue of the same name (deleted and created again) is not
// taken, nor anything when the view is not served.
func TestTablesReadTheLiveView(t *testing.T) {
	queue := func(name, uid string) *schedulingv1beta1.Queue {
		return &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + uid)},
			Status: schedulingv1beta1.QueueStatus{Allocated: cpu("1"), RunningPods: 1}}
	}
	summary := func(name, uid string) *visibilityv1beta1.QueueSummary {
		return &visibilityv1beta1.QueueSummary{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + uid)},
			Allocated: cpu("3"), Deserved: cpu("4"), RunningPods: 3, PendingPods: 2,
			PodGroups: visibilityv1beta1.PodGroupCounts{Running: 1, Inqueue: 1}}
	}
	a, b := queue("a", "a"), queue("b", "b")
	o := &Options{queues: fake.NewSimpleClientset(summary("a", "a"), summary("b", "an-older-b"))}
	o.withLiveStatus(context.Background(), []*schedulingv1beta1.Queue{a, b})
	if got := a.Status; got.Allocated.Cpu().Value() != 3 || got.Deserved.Cpu().Value() != 4 || got.RunningPods != 3 ||
		got.PendingPods != 2 || got.Running != 1 || got.Inqueue != 1 {
		t.Errorf("queue a: status %+v; want the live view's numbers", got)
	}
	if got := b.Status; got.Allocated.Cpu().Value() != 1 || got.RunningPods != 1 {
		t.Errorf("queue b: status %+v; want its own, the summary being of another queue b", got)
	}
}

// A Job stands where its first waiting pod stands, and waits for what the view says of that pod; a
// PodGroup, QueueUnit or pod where the view numbers it; work the view does not number has no place
// and keeps why its objects say it waits; a reservation keeps saying when it starts.
func TestJobsFromLiveView(t *testing.T) {
	work := map[string]liveWork{
		liveKey("Pod", "ns", "sweep-1"): {4, "later"}, liveKey("Pod", "ns", "sweep-2"): {2, "at its share now"},
		liveKey("PodGroup", "ns", "gang"): {1, "gang now"}, liveKey("Pod", "ns", "lone"): {3, ""},
		liveKey("PodGroup", "ns", "reserved"): {5, "gang now"},
	}
	for _, tt := range []struct {
		job         job
		want        int32
		wantWaiting string
	}{
		{job{kind: "Job", namespace: "ns", name: "sweep", pods: []string{"sweep-0", "sweep-1", "sweep-2"}, waiting: "then"}, 2, "at its share now"},
		{job{kind: "PodGroup (volcano)", namespace: "ns", name: "gang", waiting: "then"}, 1, "gang now"},
		{job{kind: "PodGroup", namespace: "ns", name: "reserved", waiting: "starts in 5m", reserved: true}, 5, "starts in 5m"},
		{job{kind: "Pod", namespace: "ns", name: "lone", waiting: "then"}, 3, "then"},
		{job{kind: "Pod", namespace: "other", name: "lone", waiting: "then"}, 0, "then"},
		{job{kind: "QueueUnit", namespace: "ns", name: "sweep"}, 0, ""},
	} {
		j := tt.job
		j.fromLiveView(work)
		if j.position != tt.want || j.waiting != tt.wantWaiting {
			t.Errorf("%s %s/%s: position %d, waiting %q; want %d, %q", j.kind, j.namespace, j.name, j.position, j.waiting, tt.want, tt.wantWaiting)
		}
	}
}
