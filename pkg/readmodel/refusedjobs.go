package readmodel

import (
	"cmp"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	resourcehelper "k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/utils/ptr"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/rules"
)

// ReasonPodsRefused is the reason of a Job of queue-scheduler that has no pod because admission
// refuses its pods (its queue does not exist or does not take its namespace, its request exceeds a
// capability): created before the webhook was installed, during an outage, or before its queue
// changed. No queue counts it; its FailedCreate events repeat the refusal.
const ReasonPodsRefused = "PodsRefused"

// refusedJobs is the pending work of namespace ("" for all) that no queue holds because no pod of it
// exists: the running Jobs of queue-scheduler without a live pod whose pod template admission
// refuses now, judged by the webhook's rule (rules.JudgeNewPod) on the caches. Each stands alone, at
// no position (0), in the queue its pods name or resolve to.
func (m *Model) refusedJobs(namespace string) []visibilityv1beta1.PendingWorkload {
	lister := m.acct.Store.Jobs()
	if lister == nil {
		return nil
	}
	jobs, err := lister.Jobs(namespace).List(labels.Everything())
	if err != nil || len(jobs) == 0 {
		return nil
	}
	withPods := map[types.UID]bool{}
	for _, pod := range m.acct.Pods.LivePods() {
		if ref := metav1.GetControllerOf(pod); ref != nil && ref.Kind == "Job" {
			withPods[ref.UID] = true
		}
	}
	var out []visibilityv1beta1.PendingWorkload
	for _, job := range jobs {
		if withPods[job.UID] || !jobRuns(job) || !schedulingv1beta1.SchedulesJobPods(job, m.namespaceLabels(job.Namespace)) {
			continue
		}
		if item, refused := m.refusedJob(job); refused {
			out = append(out, item)
		}
	}
	slices.SortFunc(out, func(a, b visibilityv1beta1.PendingWorkload) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// refusedJob is job as pending work when admission refuses the pods its template makes.
func (m *Model) refusedJob(job *batchv1.Job) (visibilityv1beta1.PendingWorkload, bool) {
	pod := schedulingv1beta1.JobTemplatePod(job)
	pod.OwnerReferences = append(slices.Clone(job.OwnerReferences), metav1.OwnerReference{
		APIVersion: batchv1.SchemeGroupVersion.String(), Kind: "Job", Name: job.Name, UID: job.UID, Controller: ptr.To(true)})
	verdict, err := rules.JudgeNewPod(pod, field.NewPath("spec", "template"), m.acct.Store.PodGroupInCache, m.acct.Rules(), m.acct.Rules())
	if err != nil || len(verdict.Errs) == 0 {
		return visibilityv1beta1.PendingWorkload{}, false
	}
	queue := pod.Labels[schedulingv1beta1.QueueLabel]
	if queue == "" {
		queue, _ = m.acct.QueueOf(pod)
	}
	return workload(visibilityv1beta1.WorkloadJob, job.Namespace, job.Name, job.CreationTimestamp, queue, corev1helpers.PodPriority(pod), 0,
		resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}), ReasonPodsRefused,
		"admission refuses the Job's pods: "+verdict.Errs.ToAggregate().Error()), true
}

// jobRuns says whether a Job is neither finished nor suspended.
func jobRuns(job *batchv1.Job) bool {
	for _, c := range job.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == v1.ConditionTrue {
			return false
		}
	}
	return !ptr.Deref(job.Spec.Suspend, false)
}

// namespaceLabels are the labels of a namespace in the cache, nil when it is not there.
func (m *Model) namespaceLabels(name string) map[string]string {
	if ns, err := m.acct.Store.Namespaces().Get(name); err == nil {
		return ns.Labels
	}
	return nil
}
