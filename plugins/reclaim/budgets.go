package reclaim

import (
	v1 "k8s.io/api/core/v1"
	policy "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	fwk "k8s.io/kube-scheduler/framework"
)

// budgets counts, per PodDisruptionBudget, the evictions it still allows in one dry run: a victim
// whose eviction the API server would refuse is never chosen, so that an eviction refused half way
// through never leaves some victims gone for nothing.
type budgets struct {
	pdbs      []*policy.PodDisruptionBudget
	selectors []labels.Selector
	left      []int32
}

func newBudgets(pdbs []*policy.PodDisruptionBudget) *budgets {
	b := &budgets{pdbs: pdbs, selectors: make([]labels.Selector, len(pdbs)), left: make([]int32, len(pdbs))}
	for i, pdb := range pdbs {
		if pdb.Spec.Selector == nil {
			continue
		}
		if s, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector); err == nil {
			b.selectors[i] = s
		}
		b.left[i] = pdb.Status.DisruptionsAllowed
	}
	return b
}

// allows says whether every budget the pods fall under allows their evictions on top of those taken,
// and no pod falls under two budgets (the Eviction API refuses to evict those).
func (b *budgets) allows(pods []fwk.PodInfo) bool {
	need, ok := b.count(podsOf(pods))
	if !ok {
		return false
	}
	for i, n := range need {
		if n > b.left[i] {
			return false
		}
	}
	return true
}

// take counts the pods' evictions (sign 1) or gives them back (sign -1).
func (b *budgets) take(pods []fwk.PodInfo, sign int32) { b.takePods(podsOf(pods), sign) }

func (b *budgets) takePods(pods []*v1.Pod, sign int32) {
	need, _ := b.count(pods)
	for i, n := range need {
		b.left[i] -= sign * n
	}
}

// count returns, per budget, how many of the pods it covers, and false when a pod falls under two
// budgets. A nil selector covers nothing, an empty one every pod of the namespace (policy/v1); a pod
// a budget lists as disrupted already is not counted again, as the API server's eviction does not.
func (b *budgets) count(pods []*v1.Pod) (map[int]int32, bool) {
	out := map[int]int32{}
	for _, pod := range pods {
		covered := 0
		for i, pdb := range b.pdbs {
			if b.selectors[i] == nil || pdb.Namespace != pod.Namespace || !b.selectors[i].Matches(labels.Set(pod.Labels)) {
				continue
			}
			if covered++; covered > 1 {
				return nil, false
			}
			if _, disrupted := pdb.Status.DisruptedPods[pod.Name]; !disrupted {
				out[i]++
			}
		}
	}
	return out, true
}

func (b *budgets) clone() *budgets {
	return &budgets{pdbs: b.pdbs, selectors: b.selectors, left: append([]int32(nil), b.left...)}
}

func podsOf(infos []fwk.PodInfo) []*v1.Pod {
	out := make([]*v1.Pod, len(infos))
	for i, pi := range infos {
		out[i] = pi.GetPod()
	}
	return out
}
