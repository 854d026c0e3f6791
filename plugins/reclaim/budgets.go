package reclaim

import (
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
		if s, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector); err == nil && !s.Empty() {
			b.selectors[i] = s
		}
		b.left[i] = pdb.Status.DisruptionsAllowed
	}
	return b
}

// allows says whether every budget the pods fall under allows their evictions on top of those taken.
func (b *budgets) allows(pods []fwk.PodInfo) bool {
	need := b.count(pods)
	for i, n := range need {
		if n > b.left[i] {
			return false
		}
	}
	return true
}

// take counts the pods' evictions (sign 1) or gives them back (sign -1).
func (b *budgets) take(pods []fwk.PodInfo, sign int32) {
	for i, n := range b.count(pods) {
		b.left[i] -= sign * n
	}
}

// count returns, per budget, how many of the pods it covers; a pod it lists as disrupted already
// is not counted again, as the API server's eviction does not.
func (b *budgets) count(pods []fwk.PodInfo) map[int]int32 {
	out := map[int]int32{}
	for _, pi := range pods {
		pod := pi.GetPod()
		for i, pdb := range b.pdbs {
			if b.selectors[i] == nil || pdb.Namespace != pod.Namespace || !b.selectors[i].Matches(labels.Set(pod.Labels)) {
				continue
			}
			if _, disrupted := pdb.Status.DisruptedPods[pod.Name]; disrupted {
				continue
			}
			out[i]++
		}
	}
	return out
}

func (b *budgets) clone() *budgets {
	return &budgets{pdbs: b.pdbs, selectors: b.selectors, left: append([]int32(nil), b.left...)}
}
