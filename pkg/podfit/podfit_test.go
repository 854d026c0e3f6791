package podfit

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var dims = []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourcePods, "example.com/gpu"}

// A pod's requests count its overhead and its largest init container, in milli-cpu, bytes, one pod
// and whole units of the rest.
func TestRequests(t *testing.T) {
	pod := &v1.Pod{Spec: v1.PodSpec{
		Overhead: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")},
		InitContainers: []v1.Container{{Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
			v1.ResourceMemory: resource.MustParse("2Gi")}}}},
		Containers: []v1.Container{{Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
			v1.ResourceCPU: resource.MustParse("1500m"), v1.ResourceMemory: resource.MustParse("1Gi"), "example.com/gpu": resource.MustParse("2")}}}},
	}}
	if got, want := Requests(dims, pod), []int64{1600, 2 << 30, 1, 2}; !slices.Equal(got, want) {
		t.Errorf("requests %v, want %v", got, want)
	}
}

// A pod may go only where its node selector matches and it tolerates every NoSchedule and NoExecute
// taint; pods with the same constraints share one answer.
func TestEligibility(t *testing.T) {
	labelled := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"pool": "gpu"}}}
	tainted := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "b", Labels: map[string]string{"pool": "gpu"}},
		Spec: v1.NodeSpec{Taints: []v1.Taint{{Key: "dedicated", Effect: v1.TaintEffectNoSchedule}}}}
	plain := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "c"}}
	e := NewEligibility([]*v1.Node{labelled, tainted, plain})
	selecting := &v1.Pod{Spec: v1.PodSpec{NodeSelector: map[string]string{"pool": "gpu"}}}
	if got := e.Of(selecting); !slices.Equal(got, []bool{true, false, false}) {
		t.Errorf("a pod selecting the gpu pool: %v", got)
	}
	tolerating := selecting.DeepCopy()
	tolerating.Spec.Tolerations = []v1.Toleration{{Key: "dedicated", Operator: v1.TolerationOpExists}}
	if got := e.Of(tolerating); !slices.Equal(got, []bool{true, true, false}) {
		t.Errorf("a pod selecting the gpu pool and tolerating the taint: %v", got)
	}
	if got := e.Of(&v1.Pod{}); !slices.Equal(got, []bool{true, false, true}) {
		t.Errorf("a pod without constraints: %v", got)
	}
}
