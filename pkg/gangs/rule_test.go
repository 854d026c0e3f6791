package gangs_test

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1api "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	spv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"
	vcv1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/gangs"
	"github.com/queue-scheduler/queue-scheduler/pkg/gangsource"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// group is a PodGroup as Gang, Reclaim, the start plan and the controller read it.
func group(spec schedulingv1beta1.PodGroupSpec) *schedulingv1beta1.PodGroup {
	return &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "g"}, Spec: spec}
}

// The PodGroups of every source, as the sources hand them over: queue-scheduler's own, and those
// that stand for Volcano's, scheduler-plugins' and Kubernetes' PodGroups.
func sourceGroups() map[string]*schedulingv1beta1.PodGroup {
	cpu4 := v1.ResourceList{v1.ResourceCPU: resource.MustParse("4")}
	own := util.MakePodGroup("ns", "g").MinMember(3).Obj()
	own.Spec.MinTaskMember = map[string]int32{"ps": 1, "worker": 2}
	own.Spec.MinResources = cpu4
	return map[string]*schedulingv1beta1.PodGroup{
		"own, tasks": own,
		"volcano, tasks": group(gangsource.NewVolcano(nil).Mirror(&vcv1beta1.PodGroup{Spec: vcv1beta1.PodGroupSpec{
			MinMember: 3, MinTaskMember: map[string]int32{"ps": 1, "worker": 2}, MinResources: &cpu4}})),
		// A Volcano job whose tasks' minAvailable default to their replicas: minMember 1 of any task.
		"volcano, tasks above minMember": group(gangsource.NewVolcano(nil).Mirror(&vcv1beta1.PodGroup{Spec: vcv1beta1.PodGroupSpec{
			MinMember: 1, MinTaskMember: map[string]int32{"worker": 4}}})),
		"scheduler-plugins": group(gangsource.NewSchedulerPlugins(nil).Mirror(&spv1alpha1.PodGroup{Spec: spv1alpha1.PodGroupSpec{
			MinMember: 3, MinResources: cpu4}})),
		"kubernetes": group(gangsource.NewKubernetes(nil).Mirror(&schedulingv1beta1api.PodGroup{Spec: schedulingv1beta1api.PodGroupSpec{
			SchedulingPolicy: schedulingv1beta1api.PodGroupSchedulingPolicy{Gang: &schedulingv1beta1api.GangSchedulingPolicy{MinCount: 3}}}})),
		"kubernetes, basic policy": group(gangsource.NewKubernetes(nil).Mirror(&schedulingv1beta1api.PodGroup{})),
	}
}

func member(name, task string) *v1.Pod {
	w := util.MakePod("ns", name).UID(name)
	if task != "" {
		w = w.Label(schedulingv1beta1.TaskLabel, task)
	}
	return w.Obj()
}

// The one rule, fed the same members for the PodGroups of every source: whether they make the gang
// whole (Lacking, Complete), how many it is short (Short), which candidates fill it (Fill), and
// whether its members wait for each other (IsGang). minResources plays no part in the count.
func TestGangRule(t *testing.T) {
	ps, w0, w1, w2 := member("ps", "ps"), member("w0", "worker"), member("w1", "worker"), member("w2", "worker")
	plain := member("plain", "")
	groups := sourceGroups()
	tests := []struct {
		group      string
		have       []*v1.Pod // members counted (placed, running…)
		candidates []*v1.Pod
		lacking    string
		short      int32
		fill       []string // names Fill picks
		fillOK     bool
		isGang     bool
	}{
		{"own, tasks", nil, []*v1.Pod{w0, w1, w2, ps}, "0 of its minMember 3 pods", 3, []string{"w0", "w1", "ps"}, true, true},
		{"own, tasks", []*v1.Pod{w0, w1, w2}, []*v1.Pod{plain, ps}, `0 of its minTaskMember 1 pods of task "ps"`, 1, []string{"ps"}, true, true},
		{"own, tasks", []*v1.Pod{w0, w1}, []*v1.Pod{w2, plain}, `2 of its minMember 3 pods`, 1, []string{"w2"}, false, true},
		{"own, tasks", []*v1.Pod{ps, w0, w1}, []*v1.Pod{w2}, "", 0, nil, true, true},
		{"volcano, tasks", []*v1.Pod{ps, w0}, []*v1.Pod{plain, w1}, "2 of its minMember 3 pods", 1, []string{"w1"}, true, true},
		{"volcano, tasks", []*v1.Pod{w0, w1, w2}, []*v1.Pod{plain}, `0 of its minTaskMember 1 pods of task "ps"`, 1, []string{}, false, true},
		{"volcano, tasks above minMember", []*v1.Pod{w0}, nil, "", 0, nil, true, false},
		{"volcano, tasks above minMember", nil, []*v1.Pod{plain, w0}, "0 of its minMember 1 pods", 1, []string{"plain"}, true, false},
		{"scheduler-plugins", []*v1.Pod{ps}, []*v1.Pod{plain, w0, w1}, "1 of its minMember 3 pods", 2, []string{"plain", "w0"}, true, true},
		{"scheduler-plugins", []*v1.Pod{ps, w0, w1}, nil, "", 0, nil, true, true},
		{"kubernetes", []*v1.Pod{w0, w1}, []*v1.Pod{plain}, "2 of its minMember 3 pods", 1, []string{"plain"}, true, true},
		{"kubernetes, basic policy", nil, []*v1.Pod{plain}, "0 of its minMember 1 pods", 1, []string{"plain"}, true, false},
	}
	for _, tt := range tests {
		pg := groups[tt.group]
		have := gangs.Count(tt.have, func(*v1.Pod) bool { return true })
		if got := gangs.Lacking(pg, have); got != tt.lacking {
			t.Errorf("%s, %d members: Lacking = %q, want %q", tt.group, len(tt.have), got, tt.lacking)
		}
		if got := gangs.Complete(pg, have); got != (tt.lacking == "") {
			t.Errorf("%s, %d members: Complete = %t", tt.group, len(tt.have), got)
		}
		if got := gangs.Short(pg, have); got != tt.short {
			t.Errorf("%s, %d members: Short = %d, want %d", tt.group, len(tt.have), got, tt.short)
		}
		picked, ok := gangs.Fill(pg, have, tt.candidates)
		names := []string{}
		for _, p := range picked {
			names = append(names, p.Name)
		}
		if ok != tt.fillOK || (tt.fill != nil && !slices.Equal(names, tt.fill)) || (tt.fill == nil && len(names) > 0) {
			t.Errorf("%s, %d members: Fill = %v, %t; want %v, %t", tt.group, len(tt.have), names, ok, tt.fill, tt.fillOK)
		}
		if got := gangs.IsGang(pg); got != tt.isGang {
			t.Errorf("%s: IsGang = %t, want %t", tt.group, got, tt.isGang)
		}
	}
}

// The task minimums are named in order, minMember first; a zero minimum asks for nothing, and a
// gang of one member that asks for a task's member waits like any gang.
func TestLackingNamesTheFirstMinimumMissed(t *testing.T) {
	withTasks := func(minMember int32, tasks map[string]int32) *schedulingv1beta1.PodGroup {
		pg := util.MakePodGroup("ns", "g").MinMember(minMember).Obj()
		pg.Spec.MinTaskMember = tasks
		return pg
	}
	tests := []struct {
		name string
		pg   *schedulingv1beta1.PodGroup
		have gangs.Members
		want string
	}{
		{"minMember before tasks", withTasks(3, map[string]int32{"ps": 1}), gangs.Members{All: 2}, "2 of its minMember 3 pods"},
		{"tasks named in order", withTasks(4, map[string]int32{"b": 2, "a": 2}), gangs.Members{All: 4, Tasks: map[string]int32{"c": 4}},
			`0 of its minTaskMember 2 pods of task "a"`},
		{"a zero minimum", withTasks(2, map[string]int32{"ps": 0}), gangs.Members{All: 2}, ""},
	}
	for _, tt := range tests {
		if got := gangs.Lacking(tt.pg, tt.have); got != tt.want {
			t.Errorf("%s: Lacking = %q, want %q", tt.name, got, tt.want)
		}
	}
	if !gangs.IsGang(withTasks(1, map[string]int32{"ps": 1})) || gangs.IsGang(withTasks(1, nil)) || gangs.IsGang(withTasks(1, map[string]int32{"w": 2})) {
		t.Error("IsGang: minMember 1 is a gang only with task minimums that apply")
	}
	if got := gangs.Short(withTasks(4, map[string]int32{"ps": 2, "w": 2}), gangs.Members{All: 3, Tasks: map[string]int32{"w": 3}}); got != 2 {
		t.Errorf("Short counts each task's missing members beyond minMember's: got %d, want 2", got)
	}
}

// Slack and Without say which members may leave a whole gang: those of a task at its minimum may not.
func TestSlack(t *testing.T) {
	groups := sourceGroups()
	all := func(*v1.Pod) bool { return true }
	ps, w0, w1, w2 := member("ps", "ps"), member("w0", "worker"), member("w1", "worker"), member("w2", "worker")
	bound := gangs.Count([]*v1.Pod{ps, w0, w1, w2}, all)
	for _, tt := range []struct {
		group string
		have  gangs.Members
		task  string
		want  int32
	}{
		{"own, tasks", bound, "worker", 1},
		{"own, tasks", bound, "ps", 0},
		{"own, tasks", bound, "", 1},
		{"own, tasks", gangs.Count([]*v1.Pod{w0, w1, w2}, all), "worker", 0}, // not whole: nothing may leave
		{"scheduler-plugins", bound, "ps", 1},
		{"kubernetes", gangs.Count([]*v1.Pod{w0, w1}, all), "", 0},
	} {
		if got := gangs.Slack(groups[tt.group], tt.have, tt.task); got != tt.want {
			t.Errorf("%s, %d members: Slack(%q) = %d, want %d", tt.group, tt.have.All, tt.task, got, tt.want)
		}
	}
	pg := groups["own, tasks"]
	if !gangs.Complete(pg, bound.Without(gangs.Count([]*v1.Pod{w0}, all))) {
		t.Error("a gang that loses a worker above the task's minimum is still whole")
	}
	if gangs.Complete(pg, bound.Without(gangs.Count([]*v1.Pod{ps}, all))) {
		t.Error("a gang that loses its only ps is whole")
	}
}

// The least a gang's members ask for together is counted resource by resource over the members that
// make it whole: the smallest of each task's minimum first, then the smallest of the rest.
func TestLeast(t *testing.T) {
	sized := func(name, task, cpu, memory string) *v1.Pod {
		p := member(name, task)
		p.Spec.Containers = []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{
			Requests: util.ResourceList(map[v1.ResourceName]string{v1.ResourceCPU: cpu, v1.ResourceMemory: memory})}}}
		return p
	}
	pods := []*v1.Pod{sized("ps0", "ps", "4", "1Gi"), sized("ps1", "ps", "1", "8Gi"),
		sized("w0", "worker", "3", "2Gi"), sized("w1", "worker", "2", "4Gi"), sized("w2", "worker", "1", "3Gi")}
	requests := func(p *v1.Pod) v1.ResourceList { return p.Spec.Containers[0].Resources.Requests }
	names := []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory}
	pg := util.MakePodGroup("ns", "g").MinMember(4).Obj()
	pg.Spec.MinTaskMember = map[string]int32{"ps": 1, "worker": 2}
	least, ok := gangs.Least(pg, pods, requests, names)
	// cpu: ps1 1, w2 1 and w1 2, then the smallest left, w0 3: 7. memory: ps0 1Gi, w0 2Gi and w2
	// 3Gi, then w1 4Gi: 10Gi.
	if cpu, memory := least[v1.ResourceCPU], least[v1.ResourceMemory]; !ok || cpu.String() != "7" || memory.String() != "10Gi" {
		t.Errorf("least: %v %v (whole %t), want cpu 7, memory 10Gi", cpu.String(), memory.String(), ok)
	}
	if _, ok := gangs.Least(util.MakePodGroup("ns", "g").MinMember(6).Obj(), pods, requests, names); ok {
		t.Error("5 pods for minMember 6: want not whole")
	}
}
