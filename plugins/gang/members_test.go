package gang

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// count reads each member's task from queue-scheduler's label or Volcano's annotation.
func TestCountByTask(t *testing.T) {
	pods := []*v1.Pod{
		util.MakePod("ns", "ps").UID("ps").Label(schedulingv1beta1.TaskLabel, "ps").Node("n").Obj(),
		util.MakePod("ns", "w0").UID("w0").Obj(),
		util.MakePod("ns", "w1").UID("w1").Obj(),
		util.MakePod("ns", "plain").UID("plain").Obj(),
	}
	pods[1].Annotations = map[string]string{schedulingv1beta1.VolcanoTaskAnnotation: "worker"}
	pods[2].Labels = map[string]string{schedulingv1beta1.VolcanoTaskAnnotation: "worker"}
	m := newMembers(func(string) []*v1.Pod { return pods }, func() int64 { return 0 }, clock.RealClock{})
	m.reserve("w1")
	c := m.count("ns/g")
	if c.live.All != 4 || c.assigned.All != 2 {
		t.Errorf("live %d assigned %d, want 4 and 2", c.live.All, c.assigned.All)
	}
	if c.live.Tasks["ps"] != 1 || c.live.Tasks["worker"] != 2 || c.assigned.Tasks["ps"] != 1 || c.assigned.Tasks["worker"] != 1 {
		t.Errorf("per task: live %v assigned %v", c.live.Tasks, c.assigned.Tasks)
	}
}
