// Package podfit reads what a pod asks of a node and where it may go, for the planners that place
// pods ahead of the scheduler: the Backfill plugin's reservations (package timeline) and the
// forecast of when pending work starts (package forecast). Amounts are vectors over a list of
// resources, in the units of the scheduler's NodeInfo: milli-cpu, bytes, and whole units of every
// other resource, with the pod count for pods.
package podfit

import (
	"reflect"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
)

// Vector is an amount of each resource of a list, in the list's order.
type Vector []int64

// Fits says whether v fits in room.
func (v Vector) Fits(room Vector) bool {
	for i, x := range v {
		if x > 0 && x > room[i] {
			return false
		}
	}
	return true
}

// Add adds o times sign to v in place.
func (v Vector) Add(o Vector, sign int64) {
	for i, x := range o {
		v[i] += sign * x
	}
}

// Clone is a copy of v.
func (v Vector) Clone() Vector { return append(Vector(nil), v...) }

// Requests is what a pod requests, its overhead included, over dims; one pod.
func Requests(dims []v1.ResourceName, pod *v1.Pod) Vector {
	return Amounts(dims, resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}), 1)
}

// Amounts is list over dims, with pods for the pod count.
func Amounts(dims []v1.ResourceName, list v1.ResourceList, pods int64) Vector {
	v := make(Vector, len(dims))
	for i, name := range dims {
		q, ok := list[name]
		switch {
		case name == v1.ResourcePods:
			v[i] = pods
		case !ok:
		case name == v1.ResourceCPU:
			v[i] = q.MilliValue()
		default:
			v[i] = q.Value()
		}
	}
	return v
}

// List is v over dims as a ResourceList, the inverse of Amounts: its zero amounts left out.
func List(dims []v1.ResourceName, v Vector) v1.ResourceList {
	out := v1.ResourceList{}
	for i, name := range dims {
		switch {
		case v[i] == 0:
		case name == v1.ResourceCPU:
			out[name] = *resource.NewMilliQuantity(v[i], resource.DecimalSI)
		case name == v1.ResourceMemory || name == v1.ResourceEphemeralStorage:
			out[name] = *resource.NewQuantity(v[i], resource.BinarySI)
		default:
			out[name] = *resource.NewQuantity(v[i], resource.DecimalSI)
		}
	}
	return out
}

// Eligibility says on which of its nodes a pod may run by its node selector, required node affinity
// and tolerations, worked out once for each distinct set of them.
type Eligibility struct {
	nodes []*v1.Node
	seen  []eligible
}

type eligible struct {
	pod *v1.Pod
	on  []bool
}

// NewEligibility reads eligibility on nodes.
func NewEligibility(nodes []*v1.Node) *Eligibility { return &Eligibility{nodes: nodes} }

// Of says, by index in the nodes, where pod may run.
func (e *Eligibility) Of(pod *v1.Pod) []bool {
	for _, s := range e.seen {
		if sameConstraints(s.pod, pod) {
			return s.on
		}
	}
	affinity := nodeaffinity.GetRequiredNodeAffinity(pod)
	on := make([]bool, len(e.nodes))
	for i, node := range e.nodes {
		match, _ := affinity.Match(node)
		_, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), node.Spec.Taints, pod.Spec.Tolerations, schedulingTaint, false)
		on[i] = match && !untolerated
	}
	e.seen = append(e.seen, eligible{pod: pod, on: on})
	return on
}

func schedulingTaint(t *v1.Taint) bool {
	return t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute
}

func sameConstraints(a, b *v1.Pod) bool {
	return reflect.DeepEqual(a.Spec.NodeSelector, b.Spec.NodeSelector) &&
		reflect.DeepEqual(a.Spec.Affinity, b.Spec.Affinity) &&
		reflect.DeepEqual(a.Spec.Tolerations, b.Spec.Tolerations)
}
