package readmodel

import (
	"slices"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/queue-scheduler/queue-scheduler/pkg/forecast"
	"github.com/queue-scheduler/queue-scheduler/pkg/runtimes"
)

// runtimeKey is what the runtime of a pod of queue and kind is learned under: its shape, what it
// asks for and the bucket of its runtime bound, in which the pods of one job are alike; none for a
// pod that stands for pods still to come and has no containers. The bound of a batch/v1 Job's pod
// is left out: the webhook writes it as the time the Job has left, which differs from pod to pod.
func (m *Model) runtimeKey(queue, kind string, pod *v1.Pod) runtimes.Key {
	key := runtimes.Key{Queue: queue, Kind: kind}
	if len(pod.Spec.Containers) == 0 {
		return key
	}
	requests := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	names := make([]v1.ResourceName, 0, len(requests))
	for name := range requests {
		names = append(names, name)
	}
	slices.Sort(names)
	shape := make([]byte, 0, 64)
	for _, name := range names {
		q := requests[name]
		shape = append(append(shape, name...), '=')
		if name == v1.ResourceCPU {
			shape = append(strconv.AppendInt(shape, q.MilliValue(), 10), 'm')
		} else {
			shape = strconv.AppendInt(shape, q.Value(), 10)
		}
		shape = append(shape, ',')
	}
	if b := m.acct.RuntimeBound(pod); b.Bounded() && !ofBatchJob(pod) {
		shape = strconv.AppendInt(append(shape, "bound="...), int64(runtimes.BucketOf(b.After)), 10)
	}
	key.Shape = string(shape)
	return key
}

// ofBatchJob says whether a batch/v1 Job controls the pod.
func ofBatchJob(pod *v1.Pod) bool {
	for _, ref := range pod.OwnerReferences {
		if ref.Controller != nil && *ref.Controller {
			return ref.Kind == "Job" && ref.APIVersion == batchv1.SchemeGroupVersion.String()
		}
	}
	return false
}

// workRuntime is the runtime of pending work of queue and kind whose pods are pods, within their
// bound: that of the shape expected to run longest among them (a gang's master and workers may
// differ), so that it does not hang on which pod comes first; or the longest a pod's runtime told
// ahead (ForecastSettings.KnownRuntime) where it is.
func (m *Model) workRuntime(queue, kind string, pods []*v1.Pod, now time.Time) forecast.Runtime {
	var longest runtimeEstimate
	seen := map[string]bool{}
	for _, pod := range pods {
		r, known := m.knownRuntime(pod)
		if !known {
			key := m.runtimeKey(queue, kind, pod)
			if seen[key.Shape] {
				continue
			}
			seen[key.Shape] = true
			r = m.runtimeOf(key, now)
		}
		longest.Runtime, longest.bounded = longerOf(longest.Runtime, r.Runtime), longerOf(longest.bounded, r.bounded)
	}
	return boundedRuntime(longest, pods)
}

// longerOf is the longer of two runtimes, at the median and at the 90th percentile apart, read from
// where the longer median was (the weaker, of two medians alike).
func longerOf(a, b forecast.Runtime) forecast.Runtime {
	basis := forecast.Weakest(a.Basis, b.Basis)
	switch {
	case a.P50 > b.P50:
		basis = a.Basis
	case b.P50 > a.P50:
		basis = b.Basis
	}
	return forecast.Runtime{P50: max(a.P50, b.P50), P90: max(a.P90, b.P90), Basis: basis}
}
