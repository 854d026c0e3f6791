package reclaim

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	policy "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/queue-scheduler/queue-scheduler/test/util"
)

func pdb(name string, allowed int32, selector *metav1.LabelSelector, disrupted ...string) *policy.PodDisruptionBudget {
	b := &policy.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Spec: policy.PodDisruptionBudgetSpec{Selector: selector}, Status: policy.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed}}
	if len(disrupted) > 0 {
		b.Status.DisruptedPods = map[string]metav1.Time{}
		for _, d := range disrupted {
			b.Status.DisruptedPods[d] = metav1.Now()
		}
	}
	return b
}

func podInfos(t *testing.T, pods ...*v1.Pod) []fwk.PodInfo {
	t.Helper()
	out := make([]fwk.PodInfo, 0, len(pods))
	for _, p := range pods {
		pi, err := framework.NewPodInfo(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, pi)
	}
	return out
}

func TestBudgetsKeepDisruptionBudgets(t *testing.T) {
	app := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}
	db := func(name string) *v1.Pod { return util.MakePod("ns", name).Label("app", "db").Obj() }
	other := util.MakePod("ns", "web").Label("app", "web").Obj()
	elsewhere := util.MakePod("other-ns", "db-x").Label("app", "db").Obj()

	b := newBudgets([]*policy.PodDisruptionBudget{pdb("one-at-a-time", 1, app, "db-gone"), pdb("selects-nothing", 0, nil)})
	if !b.allows(podInfos(t, db("db-0"))) {
		t.Fatal("the first of one allowed disruption refused")
	}
	if b.allows(podInfos(t, db("db-0"), db("db-1"))) {
		t.Error("two pods allowed under a budget of one disruption")
	}
	if !b.allows(podInfos(t, other, elsewhere, db("db-gone"))) {
		t.Error("pods no budget covers (other labels, other namespace, disrupted already, nil selector) refused")
	}
	everything := newBudgets([]*policy.PodDisruptionBudget{pdb("whole-namespace", 0, &metav1.LabelSelector{})})
	if everything.allows(podInfos(t, other)) {
		t.Error("a pod under a budget with an empty selector (every pod of the namespace) allowed")
	}
	twice := newBudgets([]*policy.PodDisruptionBudget{pdb("a", 5, app), pdb("b", 5, app)})
	if twice.allows(podInfos(t, db("db-0"))) {
		t.Error("a pod under two budgets allowed: the Eviction API refuses to evict it")
	}
	c := b.clone()
	c.take(podInfos(t, db("db-0")), 1)
	if c.allows(podInfos(t, db("db-1"))) {
		t.Error("a second disruption allowed once the budget's one was taken")
	}
	if !b.allows(podInfos(t, db("db-1"))) {
		t.Error("taking from a clone changed the original")
	}
	c.take(podInfos(t, db("db-0")), -1)
	if !c.allows(podInfos(t, db("db-1"))) {
		t.Error("a disruption given back is not available again")
	}
}

func TestTrialsTakeSurplusBeforeWholeGangsThenLowestPriority(t *testing.T) {
	single := func(priority int32, pods int) *victim {
		return &victim{priority: priority, pods: make([]fwk.PodInfo, pods)}
	}
	whole := &victim{priority: 0, wholeGang: true, pods: make([]fwk.PodInfo, 1)}
	tests := []struct {
		name string
		a, b []*victim
	}{
		{"surplus before a whole gang", []*victim{single(50, 3)}, []*victim{whole}},
		{"lower highest priority", []*victim{single(1, 3), single(2, 1)}, []*victim{single(5, 1)}},
		{"fewer pods at the same priority", []*victim{single(1, 1)}, []*victim{single(1, 2)}},
		{"no victim at all", nil, []*victim{single(0, 1)}},
	}
	for _, tt := range tests {
		a, b := &trial{victims: tt.a}, &trial{victims: tt.b}
		if !a.takesLess(b) || b.takesLess(a) {
			t.Errorf("%s: want the first trial preferred", tt.name)
		}
	}
}
