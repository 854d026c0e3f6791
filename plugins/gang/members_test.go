package gang

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// A gang is whole when its members make minMember and, where minTaskMember's minimums add up to no
// more than minMember (Volcano's rule), each task's minimum; the first minimum missed is named.
func TestLacking(t *testing.T) {
	withTasks := func(minMember int32, tasks map[string]int32) *schedulingv1beta1.PodGroup {
		pg := util.MakePodGroup("ns", "g").MinMember(minMember).Obj()
		pg.Spec.MinTaskMember = tasks
		return pg
	}
	tests := []struct {
		name  string
		pg    *schedulingv1beta1.PodGroup
		n     int32
		tasks map[string]int32
		want  string
	}{
		{"short of minMember", withTasks(3, nil), 2, nil, "2 of its minMember 3 pods"},
		{"minMember made", withTasks(3, nil), 3, nil, ""},
		{"minMember before tasks", withTasks(3, map[string]int32{"ps": 1}), 2, nil, "2 of its minMember 3 pods"},
		{"a task missing", withTasks(3, map[string]int32{"ps": 1, "worker": 2}), 3, map[string]int32{"worker": 3},
			`0 of its minTaskMember 1 pods of task "ps"`},
		{"tasks named in order", withTasks(4, map[string]int32{"b": 2, "a": 2}), 4, map[string]int32{"c": 4},
			`0 of its minTaskMember 2 pods of task "a"`},
		{"every task made", withTasks(3, map[string]int32{"ps": 1, "worker": 2}), 3, map[string]int32{"ps": 1, "worker": 2}, ""},
		{"a zero minimum", withTasks(2, map[string]int32{"ps": 0}), 2, nil, ""},
		// A Volcano job whose tasks' minAvailable default to their replicas: minMember 1 of any task.
		{"tasks above minMember do not hold", withTasks(1, map[string]int32{"worker": 4}), 1, map[string]int32{"worker": 1}, ""},
	}
	for _, tt := range tests {
		if got := lacking(tt.pg, tt.n, tt.tasks); got != tt.want {
			t.Errorf("%s: lacking = %q, want %q", tt.name, got, tt.want)
		}
	}
	// A gang of one member that asks for a task's member waits at Permit like any gang.
	if !isGang(withTasks(1, map[string]int32{"ps": 1})) || isGang(withTasks(1, nil)) || isGang(withTasks(1, map[string]int32{"w": 2})) {
		t.Error("isGang: minMember 1 is a gang only with task minimums that hold")
	}
}

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
	if c.live != 4 || c.assigned != 2 {
		t.Errorf("live %d assigned %d, want 4 and 2", c.live, c.assigned)
	}
	if c.liveTasks["ps"] != 1 || c.liveTasks["worker"] != 2 || c.assignedTasks["ps"] != 1 || c.assignedTasks["worker"] != 1 {
		t.Errorf("per task: live %v assigned %v", c.liveTasks, c.assignedTasks)
	}
}
