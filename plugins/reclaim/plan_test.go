package reclaim

import (
	"errors"
	"sort"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
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
		if got, _ := p.classify(tt.pod, queueLabel, schedulingv1beta1.PodGroupKey); got != tt.want {
			t.Errorf("%s: got %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestTallyKeepsVictimQueuesAtTheirShare(t *testing.T) {
	p := &plan{spare: map[string]v1.ResourceList{"over": cpu("2")}, req: cpu("3")}
	tally := newTally(p, nil)
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
	// Among equal priorities, the queue that used the most goes first, whatever the starts.
	vs = []*victim{
		{queue: "light", priority: 1, started: 9, remembered: 0.1},
		{queue: "heavy", priority: 1, started: 1, remembered: 2},
		{queue: "none", priority: 0, started: 1},
	}
	sort.SliceStable(vs, func(i, j int) bool { return lessImportant(vs[i], vs[j]) })
	if vs[0].queue != "none" || vs[1].queue != "heavy" || vs[2].queue != "light" {
		t.Errorf("order: want priority 0, then the queue that used the most; got %s, %s, %s", vs[0].queue, vs[1].queue, vs[2].queue)
	}
}

// The two-resource case: queue X holds memory above its share and less cpu than its share;
// the victims' little cpu does not keep X from giving memory back, but memory never goes below X's
// share, and a victim freeing only what the preemptor does not ask for is not taken.
func TestTallyCountsTheResourcesAQueueHoldsAboveItsShare(t *testing.T) {
	memory := func(q string) v1.ResourceList {
		return util.ResourceList(map[v1.ResourceName]string{v1.ResourceMemory: q})
	}
	both := func(c, m string) v1.ResourceList {
		return util.ResourceList(map[v1.ResourceName]string{v1.ResourceCPU: c, v1.ResourceMemory: m})
	}
	p := &plan{spare: map[string]v1.ResourceList{"x": memory("50Gi"), "gpus": {"nvidia.com/gpu": resource.MustParse("2")}}, req: both("10m", "25Gi")}
	tally := newTally(p, nil)
	small := &victim{kind: reclaimable, queue: "x", requests: both("10m", "25Gi")}
	for i := range 2 {
		if !tally.allows(small) {
			t.Fatalf("victim %d of 25Gi within X's 50Gi above its share refused for its 10m cpu", i)
		}
		tally.take(small)
	}
	if tally.allows(small) {
		t.Error("a third victim taken: X would go below its memory share")
	}
	gpuHolder := &victim{kind: reclaimable, queue: "gpus", requests: both("4", "16Gi")}
	gpuHolder.requests["nvidia.com/gpu"] = resource.MustParse("1")
	if tally.allows(gpuHolder) {
		t.Error("a victim of a queue above its share only in GPUs taken for a preemptor that asks for none")
	}
}
