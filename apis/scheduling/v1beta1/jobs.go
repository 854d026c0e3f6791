package v1beta1

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// JobTemplatePod is the pod a batch/v1 Job's template makes, in the Job's namespace: what admission
// judges when the Job is created and what the tools read to place the Job in a queue.
func JobTemplatePod(job *batchv1.Job) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: *job.Spec.Template.ObjectMeta.DeepCopy(), Spec: job.Spec.Template.Spec}
	pod.Namespace = job.Namespace
	return pod
}

// SchedulesJobPods says whether a Job's pods will be queue-scheduler's: its template names
// queue-scheduler, or names no other scheduler in a namespace (with namespaceLabels) opted in to it,
// whose pods the mutating webhook gives to queue-scheduler.
func SchedulesJobPods(job *batchv1.Job, namespaceLabels map[string]string) bool {
	switch job.Spec.Template.Spec.SchedulerName {
	case SchedulerName:
		return true
	case "", corev1.DefaultSchedulerName:
		return namespaceLabels[ManagedLabel] == "true"
	}
	return false
}
