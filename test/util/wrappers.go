// Package util holds fixture wrappers and wait helpers shared by the integration tests and the
// benchmarks: MakeQueue("q").Weight(2).Obj(), MakePodGroup("ns", "pg").MinMember(3).Obj(), MakeNode.
package util

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
	"k8s.io/utils/ptr"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

// QueueWrapper builds a Queue.
type QueueWrapper struct{ schedulingv1beta1.Queue }

// MakeQueue starts a Queue named name that accepts work from every namespace (namespaceSelector
// {}); Namespaces and NoNamespaces narrow that.
func MakeQueue(name string) *QueueWrapper {
	return &QueueWrapper{schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: schedulingv1beta1.QueueSpec{NamespaceSelector: &metav1.LabelSelector{}}}}
}

// Namespaces sets spec.namespaceSelector to select the namespaces with all of the given labels.
func (w *QueueWrapper) Namespaces(labels map[string]string) *QueueWrapper {
	w.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: labels}
	return w
}

// NoNamespaces removes spec.namespaceSelector: the queue accepts no namespace's work.
func (w *QueueWrapper) NoNamespaces() *QueueWrapper { w.Spec.NamespaceSelector = nil; return w }

// Obj returns the Queue.
func (w *QueueWrapper) Obj() *schedulingv1beta1.Queue { return &w.Queue }

// Weight sets spec.weight.
func (w *QueueWrapper) Weight(weight int32) *QueueWrapper { w.Spec.Weight = weight; return w }

// State sets spec.state.
func (w *QueueWrapper) State(s schedulingv1beta1.QueueState) *QueueWrapper {
	w.Spec.State = s
	return w
}

// StatusState sets status.state.
func (w *QueueWrapper) StatusState(s schedulingv1beta1.QueueState) *QueueWrapper {
	w.Status.State = s
	return w
}

// Parent sets spec.parent.
func (w *QueueWrapper) Parent(parent string) *QueueWrapper { w.Spec.Parent = parent; return w }

// Priority sets spec.priority.
func (w *QueueWrapper) Priority(p int32) *QueueWrapper { w.Spec.Priority = p; return w }

// Reclaimable sets spec.reclaimable.
func (w *QueueWrapper) Reclaimable(r bool) *QueueWrapper { w.Spec.Reclaimable = ptr.To(r); return w }

// Capability sets spec.capability from quantities such as {"cpu": "8"}.
func (w *QueueWrapper) Capability(q map[v1.ResourceName]string) *QueueWrapper {
	w.Spec.Capability = ResourceList(q)
	return w
}

// Guarantee sets spec.guarantee.resource.
func (w *QueueWrapper) Guarantee(q map[v1.ResourceName]string) *QueueWrapper {
	w.Spec.Guarantee.Resource = ResourceList(q)
	return w
}

// Used sets status.usage: the queue's own usage in resource-seconds, such as {"cpu": "3600"}, as
// checkpointed at when.
func (w *QueueWrapper) Used(q map[v1.ResourceName]string, when time.Time) *QueueWrapper {
	w.Status.Usage = &schedulingv1beta1.UsageCheckpoint{ResourceSeconds: ResourceList(q), Time: metav1.NewTime(when)}
	return w
}

// PodGroupWrapper builds a PodGroup.
type PodGroupWrapper struct{ schedulingv1beta1.PodGroup }

// MakePodGroup starts a PodGroup.
func MakePodGroup(namespace, name string) *PodGroupWrapper {
	return &PodGroupWrapper{schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}}
}

// Obj returns the PodGroup.
func (w *PodGroupWrapper) Obj() *schedulingv1beta1.PodGroup { return &w.PodGroup }

// MinMember sets spec.minMember.
func (w *PodGroupWrapper) MinMember(n int32) *PodGroupWrapper { w.Spec.MinMember = n; return w }

// Queue sets spec.queue.
func (w *PodGroupWrapper) Queue(q string) *PodGroupWrapper { w.Spec.Queue = q; return w }

// PriorityClassName sets spec.priorityClassName.
func (w *PodGroupWrapper) PriorityClassName(name string) *PodGroupWrapper {
	w.Spec.PriorityClassName = name
	return w
}

// MinResources sets spec.minResources.
func (w *PodGroupWrapper) MinResources(q map[v1.ResourceName]string) *PodGroupWrapper {
	w.Spec.MinResources = ResourceList(q)
	return w
}

// MakePod starts a pod for queue-scheduler in namespace.
func MakePod(namespace, name string) *st.PodWrapper {
	return st.MakePod().Namespace(namespace).Name(name).SchedulerName(schedulingv1beta1.SchedulerName).
		Container("registry.k8s.io/pause:3.10")
}

// MakeNode returns a Ready node with the given cpu and memory and room for 110 pods.
func MakeNode(name, cpu, memory string) *v1.Node {
	capacity := v1.ResourceList{
		v1.ResourceCPU:    resource.MustParse(cpu),
		v1.ResourceMemory: resource.MustParse(memory),
		v1.ResourcePods:   resource.MustParse("110"),
	}
	node := st.MakeNode().Name(name).Capacity(nil).Obj()
	node.Status.Capacity = capacity
	node.Status.Allocatable = capacity.DeepCopy()
	node.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}
	return node
}

// ResourceList parses quantities such as {"cpu": "8", "memory": "16Gi"}.
func ResourceList(q map[v1.ResourceName]string) v1.ResourceList {
	out := v1.ResourceList{}
	for name, value := range q {
		out[name] = resource.MustParse(value)
	}
	return out
}

// ScheduleTimeout sets spec.scheduleTimeoutSeconds.
func (w *PodGroupWrapper) ScheduleTimeout(seconds int32) *PodGroupWrapper {
	w.Spec.ScheduleTimeoutSeconds = &seconds
	return w
}

// QueueUnitWrapper builds a QueueUnit.
type QueueUnitWrapper struct{ schedulingv1beta1.QueueUnit }

// MakeQueueUnit starts a QueueUnit in queue for the batch/v1 Job named job.
func MakeQueueUnit(namespace, name, queue, job string) *QueueUnitWrapper {
	return &QueueUnitWrapper{schedulingv1beta1.QueueUnit{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: schedulingv1beta1.QueueUnitSpec{
			Queue:       queue,
			ConsumerRef: v1.ObjectReference{APIVersion: "batch/v1", Kind: "Job", Name: job},
		},
	}}
}

// Obj returns the QueueUnit.
func (w *QueueUnitWrapper) Obj() *schedulingv1beta1.QueueUnit { return &w.QueueUnit }

// Priority sets spec.priority.
func (w *QueueUnitWrapper) Priority(p int32) *QueueUnitWrapper { w.Spec.Priority = &p; return w }

// Resource sets spec.resource.
func (w *QueueUnitWrapper) Resource(q map[v1.ResourceName]string) *QueueUnitWrapper {
	w.Spec.Resource = ResourceList(q)
	return w
}

// MakeJob returns a batch/v1 Job of parallel one-CPU pods for queue-scheduler, created suspended
// when suspend is set.
func MakeJob(namespace, name string, pods int32, suspend bool) *batchv1.Job {
	pod := MakePod(namespace, "").Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: batchv1.JobSpec{
			Parallelism: &pods,
			Completions: &pods,
			Suspend:     &suspend,
			Template:    v1.PodTemplateSpec{Spec: pod.Spec},
		},
	}
}
