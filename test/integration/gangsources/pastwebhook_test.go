package gangsources

import (
	"context"
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	spv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"
	vcv1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// A scheduler-plugins gang and a Volcano gang of three one-CPU members whose pods came past the
// admission webhook (its configurations deleted, as before an install or during an outage), so that
// no pod carries queue-scheduler's pod-group label, on a cluster with room for two: nothing binds,
// and each pod says which PodGroup it waits with; once room for both appears, each binds whole.
func TestGangsPastTheWebhookBindWholeOrNothing(t *testing.T) {
	installGangCRDs(t)
	ns := newNamespace(t, "past-webhook", schedulingv1beta1.DefaultQueue)
	cpu := map[v1.ResourceName]string{v1.ResourceCPU: "1"}
	for i := range 2 {
		createPod(t, util.MakePod(ns, fmt.Sprintf("filler-%d", i)).Req(cpu).Obj())
	}
	waitCounted(t, ns, boundByName, func(got map[string]int) bool { return got["filler"] == 2 }, "the fillers bound: room for 2 left")
	createSP(t, &spv1alpha1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: "sp", Namespace: ns}, Spec: spv1alpha1.PodGroupSpec{MinMember: 3}})
	createVolcano(t, &vcv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: "vc", Namespace: ns}, Spec: vcv1beta1.PodGroupSpec{MinMember: 3}})
	util.WithoutAdmission(t, cluster.Kube, cluster.Queues, func() {
		for i := range 3 {
			createPod(t, util.MakePod(ns, fmt.Sprintf("sp-%d", i)).Label(spv1alpha1.PodGroupLabel, "sp").Req(cpu).Obj())
			vc := util.MakePod(ns, fmt.Sprintf("vc-%d", i)).Req(cpu).Obj()
			vc.Annotations = map[string]string{vcv1beta1.KubeGroupNameAnnotationKey: "vc"}
			createPod(t, vc)
		}
	})
	for _, p := range listPods(t, ns) {
		if p.Labels[schedulingv1beta1.PodGroupLabel] != "" {
			t.Fatalf("pod %s carries the pod-group label: the webhook was not away", p.Name)
		}
	}
	// Every member is held with a reason that names its PodGroup, and none is bound.
	var last string
	poll(t, "each member held naming its PodGroup", func(context.Context) (bool, error) {
		last = ""
		for _, p := range listPods(t, ns) {
			group, _, _ := strings.Cut(p.Name, "-")
			if group == "filler" {
				continue
			}
			c := util.PodScheduledCondition(&p)
			if p.Spec.NodeName != "" || c == nil || c.Status != v1.ConditionFalse || !strings.Contains(c.Message, ns+"/"+group) &&
				!strings.Contains(c.Message, fmt.Sprintf("%q", group)) {
				last += fmt.Sprintf("%s: node %q, condition %+v\n", p.Name, p.Spec.NodeName, c)
			}
		}
		return last == "", nil
	}, func() string { return last })
	if got := boundByName(t, ns); got["sp"] != 0 || got["vc"] != 0 {
		t.Fatalf("members bound of gangs that cannot fit: %v", got)
	}

	deletePod(t, ns, "filler-0")
	deletePod(t, ns, "filler-1")
	node := util.MakeNode("past-webhook-extra", "2", "8Gi")
	if _, err := cluster.Kube.CoreV1().Nodes().Create(context.Background(), node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The namespace's own clean-up deletes the pods.
	t.Cleanup(func() {
		if err := cluster.Kube.CoreV1().Nodes().Delete(context.Background(), node.Name, metav1.DeleteOptions{}); err != nil {
			t.Error(err)
		}
	})
	waitCounted(t, ns, boundByName, func(got map[string]int) bool { return got["sp"] == 3 && got["vc"] == 3 }, "both gangs bound whole once room appears")
}

// boundByName counts the bound pods of the namespace by the part of their names before the first
// "-": these pods carry no pod-group label to count them by.
func boundByName(t *testing.T, namespace string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, p := range listPods(t, namespace) {
		if prefix, _, _ := strings.Cut(p.Name, "-"); p.Spec.NodeName != "" {
			out[prefix]++
		}
	}
	return out
}
