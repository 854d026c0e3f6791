package queuesim

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	schedv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned"
)

// Namespace holds everything a scenario creates.
const Namespace = "queuesim"

// JobLabelKey names the job stream and index a pod belongs to.
const JobLabelKey = "queuesim.queue-scheduler.io/job"

// clients are the API clients a scenario uses.
type clients struct {
	kube   kubernetes.Interface
	queues versioned.Interface
	// scale is the scenario's time scale: simulated seconds a real second.
	scale float64
}

// createNodes creates the scenario's nodes, Ready, with room for 110 pods each.
func (c clients) createNodes(ctx context.Context, groups []NodeGroup) error {
	for _, g := range groups {
		for i := range g.Count {
			capacity := v1.ResourceList{v1.ResourceCPU: g.CPU.Quantity}
			if g.Memory.set {
				capacity[v1.ResourceMemory] = g.Memory.Quantity
			}
			if g.GPU.set {
				capacity["nvidia.com/gpu"] = g.GPU.Quantity
			}
			node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", nameOr(g.Name, "node"), i),
				Labels: map[string]string{"queuesim.queue-scheduler.io/group": g.Name}}}
			if err := c.createNode(ctx, node, capacity); err != nil {
				return err
			}
		}
	}
	return nil
}

// createNode creates node Ready, with capacity as its capacity and allocatable, and room for 110
// pods where capacity does not say.
func (c clients) createNode(ctx context.Context, node *v1.Node, capacity v1.ResourceList) error {
	capacity = capacity.DeepCopy()
	if capacity == nil {
		capacity = v1.ResourceList{}
	}
	if _, ok := capacity[v1.ResourcePods]; !ok {
		capacity[v1.ResourcePods] = resource.MustParse("110")
	}
	node.Status = v1.NodeStatus{Capacity: capacity, Allocatable: capacity.DeepCopy(),
		Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}}
	if _, err := c.kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create node %s: %w", node.Name, err)
	}
	return nil
}

func nameOr(name, fallback string) string {
	if name == "" {
		return fallback
	}
	return name
}

// createBasics creates the namespace, the priority classes and the queues, parents first.
func (c clients) createBasics(ctx context.Context, s *Scenario) error {
	ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}
	if _, err := c.kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create namespace: %w", err)
	}
	for _, pc := range s.PriorityClasses {
		class := &schedv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: pc.Name}, Value: pc.Value}
		if _, err := c.kube.SchedulingV1().PriorityClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create PriorityClass %s: %w", pc.Name, err)
		}
	}
	created := map[string]bool{}
	for len(created) < len(s.Queues) {
		progress := false
		for _, q := range s.Queues {
			if created[q.Name] || (q.Parent != "" && q.Parent != schedulingv1beta1.RootQueue && q.Parent != schedulingv1beta1.DefaultQueue && !created[q.Parent]) {
				continue
			}
			if _, err := c.queues.SchedulingV1beta1().Queues().Create(ctx, q.object(), metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("create queue %s: %w", q.Name, err)
			}
			created[q.Name], progress = true, true
		}
		if !progress {
			return fmt.Errorf("the queues' parents form a cycle")
		}
	}
	return nil
}

func (q *Queue) object() *schedulingv1beta1.Queue {
	out := &schedulingv1beta1.Queue{ObjectMeta: metav1.ObjectMeta{Name: q.Name}, Spec: schedulingv1beta1.QueueSpec{
		Weight: q.Weight, Parent: q.Parent, Reclaimable: q.Reclaimable, State: schedulingv1beta1.QueueState(q.State),
		Capability: resources(q.Capability),
	}}
	out.Spec.Guarantee.Resource = resources(q.Guarantee)
	out.Spec.NamespaceSelector, _ = q.namespaceSelector()
	return out
}

// namespaceSelector reads Namespaces.
func (q *Queue) namespaceSelector() (*metav1.LabelSelector, error) {
	switch strings.TrimSpace(q.Namespaces) {
	case "", "all":
		return &metav1.LabelSelector{}, nil
	case "none":
		return nil, nil
	}
	return metav1.ParseToLabelSelector(q.Namespaces)
}

func resources(m map[string]Quantity) v1.ResourceList {
	if len(m) == 0 {
		return nil
	}
	out := v1.ResourceList{}
	for name, q := range m {
		out[v1.ResourceName(name)] = q.Quantity
	}
	return out
}

// submit creates job number i of the stream: single pods, a gang, or a suspended batch/v1 Job with
// its QueueUnit.
func (c clients) submit(ctx context.Context, j *JobStream, i int) error {
	name := fmt.Sprintf("%s-%d", nameOr(j.Name, "job"), i)
	switch j.Kind {
	case KindGang:
		return c.submitGang(ctx, j, name)
	case KindUnit:
		return c.submitUnit(ctx, j, name)
	}
	for p := range j.Pods {
		if err := c.createPod(ctx, j.pod(fmt.Sprintf("%s-%d", name, p), name, true, c.scale)); err != nil {
			return err
		}
	}
	return nil
}

func (c clients) submitGang(ctx context.Context, j *JobStream, name string) error {
	pods := make([]*v1.Pod, j.Pods)
	for p := range j.Pods {
		pods[p] = j.pod(fmt.Sprintf("%s-%d", name, p), name, false, c.scale)
	}
	return c.createGang(ctx, name, j.Queue, int32(j.MinMember), j.Timeout.Duration, pods)
}

// createGang creates a PodGroup of minMember and its pods, labelled with it.
func (c clients) createGang(ctx context.Context, name, queue string, minMember int32, timeout time.Duration, pods []*v1.Pod) error {
	pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: name},
		Spec: schedulingv1beta1.PodGroupSpec{Queue: queue, MinMember: minMember}}
	if len(pods) > 0 {
		pg.Spec.PriorityClassName = pods[0].Spec.PriorityClassName
	}
	if timeout > 0 {
		seconds := int32(timeout.Seconds())
		pg.Spec.ScheduleTimeoutSeconds = &seconds
	}
	if _, err := c.queues.SchedulingV1beta1().PodGroups(Namespace).Create(ctx, pg, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create PodGroup %s: %w", name, err)
	}
	for _, pod := range pods {
		pod.Labels[schedulingv1beta1.PodGroupLabel] = name
		if err := c.createPod(ctx, pod); err != nil {
			return err
		}
	}
	return nil
}

func (c clients) submitUnit(ctx context.Context, j *JobStream, name string) error {
	return c.createUnit(ctx, name, j.Queue, j.pod("", name, false, c.scale), int32(j.Pods))
}

// createUnit creates a suspended batch/v1 Job of pods pods like template, and the QueueUnit that
// queues it.
func (c clients) createUnit(ctx context.Context, name, queue string, template *v1.Pod, pods int32) error {
	template.Spec.RestartPolicy = v1.RestartPolicyNever
	suspend := true
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: name},
		Spec: batchv1.JobSpec{Parallelism: &pods, Completions: &pods, Suspend: &suspend,
			Template: v1.PodTemplateSpec{ObjectMeta: template.ObjectMeta, Spec: template.Spec}},
	}
	created, err := c.kube.BatchV1().Jobs(Namespace).Create(ctx, job, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create Job %s: %w", name, err)
	}
	total := v1.ResourceList{}
	for r, q := range template.Spec.Containers[0].Resources.Requests {
		q.Mul(int64(pods))
		total[r] = q
	}
	unit := &schedulingv1beta1.QueueUnit{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: name},
		Spec: schedulingv1beta1.QueueUnitSpec{Queue: queue, PriorityClassName: template.Spec.PriorityClassName, Resource: total,
			ConsumerRef: v1.ObjectReference{APIVersion: "batch/v1", Kind: "Job", Name: name, UID: created.UID}}}
	if _, err := c.queues.SchedulingV1beta1().QueueUnits(Namespace).Create(ctx, unit, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create QueueUnit %s: %w", name, err)
	}
	return nil
}

func (c clients) createPod(ctx context.Context, pod *v1.Pod) error {
	if _, err := c.kube.CoreV1().Pods(Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create pod %s: %w", pod.Name, err)
	}
	return nil
}

// pod builds one pod of the stream; withQueue labels it with its queue for the scheduler (gang and
// unit pods get their queue from their PodGroup or QueueUnit). A deadline is divided by scale into
// whole real seconds, rounded up.
func (j *JobStream) pod(name, job string, withQueue bool, scale float64) *v1.Pod {
	requests := j.requests
	if requests == nil {
		requests = v1.ResourceList{v1.ResourceCPU: j.CPU.Quantity}
		if j.Memory.set {
			requests[v1.ResourceMemory] = j.Memory.Quantity
		}
		if j.GPU.set {
			requests["nvidia.com/gpu"] = j.GPU.Quantity
		}
	}
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: name,
			Labels:      map[string]string{QueueLabelKey: j.Queue, JobLabelKey: job},
			Annotations: map[string]string{RuntimeAnnotation: j.Runtime.String(), FailAnnotation: strconv.FormatBool(j.Fail)}},
		Spec: v1.PodSpec{
			SchedulerName:     schedulingv1beta1.SchedulerName,
			PriorityClassName: j.PriorityClass,
			// The stand-in kubelet stops a pod at once.
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers: []v1.Container{{Name: "work", Image: "registry.k8s.io/pause:3.10",
				Resources: v1.ResourceRequirements{Requests: requests, Limits: requests.DeepCopy()}}},
			Affinity: onlyOn(j.nodes),
		},
	}
	if withQueue {
		pod.Labels[schedulingv1beta1.QueueLabel] = j.Queue
	}
	if j.Deadline.Duration > 0 {
		pod.Spec.ActiveDeadlineSeconds = ptr.To(int64(math.Ceil(j.Deadline.Seconds() / scale)))
	}
	return pod
}

// onlyOn is the affinity of a pod that may run on the named nodes only; nil for any node.
func onlyOn(nodes []string) *v1.Affinity {
	if len(nodes) == 0 {
		return nil
	}
	return &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchFields: []v1.NodeSelectorRequirement{
			{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: nodes}}}}}}}
}
