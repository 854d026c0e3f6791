package queuesim

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// A gang waits from its PodGroup's creation until its minMember-th member is bound; members bound
// after that, or before the PodGroup is known, do not start or end a wait.
func TestGangWaitEndsAtMinMember(t *testing.T) {
	c := &clock{start: time.Now(), scale: 1}
	r := newRecorder(c)
	r.onPodGroup(util.MakePodGroup("ns", "g").MinMember(2).Queue("q").Obj())
	c.start = c.start.Add(-time.Minute) // a simulated minute later
	for i, name := range []string{"g-0", "g-1", "g-2"} {
		pod := util.MakePod("ns", name).UID(name).Label(schedulingv1beta1.PodGroupLabel, "g").Label(QueueLabelKey, "q").Node("n").Obj()
		r.onPod(pod)
		if got := len(r.gangWaits["q"]); got != min(1, i) {
			t.Fatalf("after %d members bound: %d gang waits recorded, want %d", i+1, got, min(1, i))
		}
	}
	if w := r.gangWaits["q"][0]; w < time.Minute || w > time.Minute+5*time.Second {
		t.Errorf("gang wait %s, want about a minute", w)
	}
	r.onPod(&v1.Pod{})
	if _, ok := r.pods[types.UID("")]; ok {
		t.Error("a pod without a queue label recorded")
	}
}
