package reclaim

import (
	"errors"
	"sort"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

func cpu(q string) v1.ResourceList {
	return util.ResourceList(map[v1.ResourceName]string{v1.ResourceCPU: q})
}

func queuedPod(queue, name string, priority int32) *v1.Pod {
	return util.MakePod("ns", name).Label(schedulingv1beta1.QueueLabel, queue).Priority(priority).Node("n").Obj()
}

func queueLabel(p *v1.Pod) (string, error) {
	if q := p.Labels[schedulingv1beta1.QueueLabel]; q != "" {
		return q, nil
	}
	return "", errors.New("no queue")
}

func TestClassify(t *testing.T) {
	p := &plan{queue: "mine", priority: 10, preempt: true, spare: map[string]v1.ResourceList{"over": cpu("2")}}
	terminating := queuedPod("over", "going", 0)
	terminating.DeletionTimestamp = &metav1.Time{}
	foreign := queuedPod("over", "foreign", 0)
	foreign.Spec.SchedulerName = "default-scheduler"
	tests := []struct {
		name string
		pod  *v1.Pod
		want victimKind
	}{
		{"lower priority in the same queue", queuedPod("mine", "low", 5), preemptible},
		{"same priority in the same queue", queuedPod("mine", "peer", 10), notAVictim},
		{"queue above its share", queuedPod("over", "borrowed", 100), reclaimable},
		{"queue within its share", queuedPod("fair", "kept", 0), notAVictim},
		{"already terminating", terminating, notAVictim},
		{"another scheduler's pod", foreign, notAVictim},
	}
	for _, tt := range tests {
		if got, _ := p.classify(tt.pod, queueLabel); got != tt.want {
			t.Errorf("%s: got %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestTallyKeepsVictimQueuesAtTheirShare(t *testing.T) {
	p := &plan{spare: map[string]v1.ResourceList{"over": cpu("2")}}
	tally := newTally(p)
	one := &victim{kind: reclaimable, queue: "over", requests: cpu("1")}
	if !tally.allows(one) {
		t.Fatal("first CPU of 2 spare refused")
	}
	tally.take(one)
	tally.take(one)
	if tally.allows(one) {
		t.Error("a third CPU taken from a queue with 2 above its share")
	}
	tally.giveBack(one)
	if !tally.allows(one) {
		t.Error("a CPU given back is not available again")
	}
	if !tally.allows(&victim{kind: preemptible, queue: "mine", requests: cpu("50")}) {
		t.Error("preemption within the queue is bounded by a share")
	}
}

func TestVictimOrder(t *testing.T) {
	vs := []*victim{
		{priority: 5, started: 1},
		{priority: 1, started: 1},
		{priority: 1, started: 9},
	}
	sort.SliceStable(vs, func(i, j int) bool { return lessImportant(vs[i], vs[j]) })
	if vs[0].priority != 1 || vs[0].started != 9 || vs[2].priority != 5 {
		t.Errorf("order: want lowest priority first, later start first; got %+v %+v %+v", *vs[0], *vs[1], *vs[2])
	}
}
