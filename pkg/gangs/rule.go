package gangs

import (
	"fmt"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

// The one rule of a gang's size, read by Gang, Reclaim, the start plan and the controller for a
// PodGroup of every source (queue-scheduler's own, and those that stand for scheduler-plugins',
// Volcano's and Kubernetes' PodGroups): a gang is whole when it has minMember members and, when its
// task minimums apply, minTaskMember members of each task. As in Volcano, the task minimums apply
// only when they add up to no more than minMember (a Volcano job whose tasks' minAvailable default to
// their replicas asks for minMember pods of any task). minResources is what a PodGroup's queue
// admits it with (the accounting's rule), not a count of members: it plays no part here.

// Members counts some of a gang's members (those live, those placed…), in all and per task.
type Members struct {
	// All counts the members.
	All int32
	// Tasks counts the members that name a task, per task; nil when none does.
	Tasks map[string]int32
}

// Add counts pod.
func (m *Members) Add(pod *v1.Pod) {
	m.All++
	if task := schedulingv1beta1.TaskOf(pod); task != "" {
		if m.Tasks == nil {
			m.Tasks = map[string]int32{}
		}
		m.Tasks[task]++
	}
}

// Count counts the pods that pass keep.
func Count(pods []*v1.Pod, keep func(*v1.Pod) bool) Members {
	var m Members
	for _, pod := range pods {
		if keep(pod) {
			m.Add(pod)
		}
	}
	return m
}

// TasksApply says whether pg's minTaskMember applies: it names tasks, and their minimums add up to
// no more than minMember.
func TasksApply(pg *schedulingv1beta1.PodGroup) bool {
	if len(pg.Spec.MinTaskMember) == 0 {
		return false
	}
	var total int64
	for _, n := range pg.Spec.MinTaskMember {
		total += int64(n)
	}
	return total <= int64(pg.MinMemberOrOne())
}

// IsGang says whether pg's members wait for each other: it asks for more than one member, or for
// members of some task.
func IsGang(pg *schedulingv1beta1.PodGroup) bool {
	return pg.MinMemberOrOne() > 1 || TasksApply(pg)
}

// Lacking says which of pg's minimums m misses: "" when m makes the gang whole; else the first
// missed, minMember first, then the tasks in name order, as "2 of its minMember 3 pods".
func Lacking(pg *schedulingv1beta1.PodGroup, m Members) string {
	if want := pg.MinMemberOrOne(); m.All < want {
		return fmt.Sprintf("%d of its minMember %d pods", m.All, want)
	}
	if !TasksApply(pg) {
		return ""
	}
	for _, task := range slices.Sorted(maps.Keys(pg.Spec.MinTaskMember)) {
		if have, want := m.Tasks[task], pg.Spec.MinTaskMember[task]; have < want {
			return fmt.Sprintf("%d of its minTaskMember %d pods of task %q", have, want, task)
		}
	}
	return ""
}

// Complete says whether m makes pg whole.
func Complete(pg *schedulingv1beta1.PodGroup, m Members) bool { return Lacking(pg, m) == "" }

// Short is how many members m lacks to make pg whole: what each task misses of its minimum, and at
// least what minMember misses. 0 when m makes it whole.
func Short(pg *schedulingv1beta1.PodGroup, m Members) int32 {
	var tasks int32
	if TasksApply(pg) {
		for task, want := range pg.Spec.MinTaskMember {
			tasks += max(0, want-m.Tasks[task])
		}
	}
	return max(pg.MinMemberOrOne()-m.All, tasks)
}

// Fill picks, from candidates in their order, members that make pg whole with m: first those of the
// tasks m lacks, until each task has its minimum, then any, until minMember. ok is false when the
// candidates cannot make it whole; picked is then what they can add.
func Fill(pg *schedulingv1beta1.PodGroup, m Members, candidates []*v1.Pod) (picked []*v1.Pod, ok bool) {
	have := Members{All: m.All, Tasks: maps.Clone(m.Tasks)}
	taken := make([]bool, len(candidates))
	if TasksApply(pg) {
		for i, pod := range candidates {
			task := schedulingv1beta1.TaskOf(pod)
			if want, named := pg.Spec.MinTaskMember[task]; named && have.Tasks[task] < want {
				have.Add(pod)
				picked, taken[i] = append(picked, pod), true
			}
		}
	}
	for i, pod := range candidates {
		if have.All >= pg.MinMemberOrOne() {
			break
		}
		if !taken[i] {
			have.Add(pod)
			picked = append(picked, pod)
		}
	}
	return picked, Complete(pg, have)
}

// Without is m less the members o counts, o being some of m's.
func (m Members) Without(o Members) Members {
	out := Members{All: m.All - o.All}
	for task, n := range m.Tasks {
		if left := n - o.Tasks[task]; left > 0 {
			if out.Tasks == nil {
				out.Tasks = map[string]int32{}
			}
			out.Tasks[task] = left
		}
	}
	return out
}

// Slack is how many of m's members of task ("" for a member of no task) may leave while m stays
// whole; 0 when m is not whole.
func Slack(pg *schedulingv1beta1.PodGroup, m Members, task string) int32 {
	if !Complete(pg, m) {
		return 0
	}
	slack := m.All - pg.MinMemberOrOne()
	if want, named := pg.Spec.MinTaskMember[task]; named && TasksApply(pg) {
		slack = min(slack, m.Tasks[task]-want)
	}
	return slack
}

// Least is, for each resource of names, the least that members of pods making pg whole request
// together (requests gives a pod's): the smallest of each task's minimum, then the smallest of the
// rest, resource by resource, so that no set of members that makes pg whole asks for less of any.
// ok is false when pods cannot make pg whole.
func Least(pg *schedulingv1beta1.PodGroup, pods []*v1.Pod, requests func(*v1.Pod) v1.ResourceList, names []v1.ResourceName) (v1.ResourceList, bool) {
	asked := make(map[*v1.Pod]v1.ResourceList, len(pods))
	for _, pod := range pods {
		asked[pod] = requests(pod)
	}
	least := v1.ResourceList{}
	sorted := slices.Clone(pods)
	for _, name := range names {
		slices.SortStableFunc(sorted, func(a, b *v1.Pod) int {
			qa, qb := asked[a][name], asked[b][name]
			return qa.Cmp(qb)
		})
		picked, ok := Fill(pg, Members{}, sorted)
		if !ok {
			return nil, false
		}
		var sum resource.Quantity
		for _, pod := range picked {
			sum.Add(asked[pod][name])
		}
		least[name] = sum
	}
	return least, true
}
