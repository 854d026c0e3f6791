package webhook

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	busv1alpha1 "github.com/queue-scheduler/queue-scheduler/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

// Match conditions keep the pod webhooks to the pods they judge, so that a webhook outage cannot
// block the rest of the cluster.
const (
	// PodMatchCondition: pods of queue-scheduler.
	PodMatchCondition = "object.spec.schedulerName == '" + schedulingv1beta1.SchedulerName + "'"
	// NamedWorkCondition: pods of queue-scheduler, and pods that name a queue or a PodGroup of ours.
	NamedWorkCondition = PodMatchCondition + " || (has(object.metadata.labels) && ('" + schedulingv1beta1.QueueLabel +
		"' in object.metadata.labels || '" + schedulingv1beta1.PodGroupLabel + "' in object.metadata.labels))"
	// JobTemplateCondition: Jobs whose pods will be queue-scheduler's, or name a queue or a PodGroup
	// of ours.
	JobTemplateCondition = "object.spec.template.spec.schedulerName == '" + schedulingv1beta1.SchedulerName +
		"' || (has(object.spec.template.metadata.labels) && ('" + schedulingv1beta1.QueueLabel +
		"' in object.spec.template.metadata.labels || '" + schedulingv1beta1.PodGroupLabel + "' in object.spec.template.metadata.labels))"
	// ManagedJobCondition: in a namespace opted in to queue-scheduler, Jobs whose pods name no
	// scheduler, which the mutating webhook gives to queue-scheduler.
	ManagedJobCondition = "!has(object.spec.template.spec.schedulerName) || object.spec.template.spec.schedulerName in ['', 'default-scheduler']"
	// QueueLabelChangeCondition: updates that add, change or remove a pod's queue label.
	QueueLabelChangeCondition = "(has(object.metadata.labels) && '" + schedulingv1beta1.QueueLabel + "' in object.metadata.labels ? object.metadata.labels['" +
		schedulingv1beta1.QueueLabel + "'] : '\x00') != (has(oldObject.metadata.labels) && '" + schedulingv1beta1.QueueLabel +
		"' in oldObject.metadata.labels ? oldObject.metadata.labels['" + schedulingv1beta1.QueueLabel + "'] : '\x00')"
)

func notKubeSystem() *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system"},
	}}}
}

// MutatingConfiguration is the MutatingWebhookConfiguration of queue-scheduler: it decides a new pod's
// scheduler (in namespaces labelled ManagedLabel "true") and queue. Pods of opted-in namespaces all
// go through it; elsewhere only pods of queue-scheduler and pods that name its queues or PodGroups.
func MutatingConfiguration(name string, clientConfig func(path string) admissionregistrationv1.WebhookClientConfig) *admissionregistrationv1.MutatingWebhookConfiguration {
	pods := func(webhook string, selector *metav1.LabelSelector, conditions ...admissionregistrationv1.MatchCondition) admissionregistrationv1.MutatingWebhook {
		return admissionregistrationv1.MutatingWebhook{
			Name:                    webhook,
			ClientConfig:            clientConfig(MutatePodsPath),
			Rules:                   []admissionregistrationv1.RuleWithOperations{rule("", "v1", "pods", admissionregistrationv1.Create)},
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          ptr.To[int32](10),
			NamespaceSelector:       selector,
			MatchConditions:         conditions,
			ReinvocationPolicy:      ptr.To(admissionregistrationv1.NeverReinvocationPolicy),
		}
	}
	managed := &metav1.LabelSelector{MatchLabels: map[string]string{schedulingv1beta1.ManagedLabel: "true"}}
	others := notKubeSystem()
	others.MatchExpressions = append(others.MatchExpressions, metav1.LabelSelectorRequirement{
		Key: schedulingv1beta1.ManagedLabel, Operator: metav1.LabelSelectorOpNotIn, Values: []string{"true"},
	})
	return &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.MutatingWebhook{
			pods("managed-pods.queue-scheduler.io", managed),
			pods("pods.queue-scheduler.io", others, admissionregistrationv1.MatchCondition{Name: "queue-scheduler-work", Expression: NamedWorkCondition}),
		},
	}
}

// Configuration is the ValidatingWebhookConfiguration of queue-scheduler; clientConfig says how the
// API server reaches the server for a path (a Service in a cluster, a URL on a local one).
func Configuration(name string, clientConfig func(path string) admissionregistrationv1.WebhookClientConfig) *admissionregistrationv1.ValidatingWebhookConfiguration {
	ours := func(webhook, path, group, resource string, ops ...admissionregistrationv1.OperationType) admissionregistrationv1.ValidatingWebhook {
		return admissionregistrationv1.ValidatingWebhook{
			Name:                    webhook,
			ClientConfig:            clientConfig(path),
			Rules:                   []admissionregistrationv1.RuleWithOperations{rule(group, versionOf(group), resource, ops...)},
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          ptr.To[int32](10),
		}
	}
	pods := ours("pods.queue-scheduler.io", PodsPath, "", "pods", admissionregistrationv1.Create)
	pods.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "queue-scheduler-pods", Expression: PodMatchCondition}}
	pods.NamespaceSelector = notKubeSystem()
	relabel := ours("pod-queue-labels.queue-scheduler.io", PodsPath, "", "pods", admissionregistrationv1.Update)
	relabel.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "queue-label-changes", Expression: QueueLabelChangeCondition}}
	relabel.NamespaceSelector = notKubeSystem()
	// A Job is judged early for its author's sake; its pods are judged again as they are created, so
	// an outage of the webhook lets Jobs through rather than blocking them.
	jobs := ours("jobs.queue-scheduler.io", JobsPath, "batch", "jobs", admissionregistrationv1.Create)
	jobs.FailurePolicy = ptr.To(admissionregistrationv1.Ignore)
	jobs.NamespaceSelector = notKubeSystem()
	jobs.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "queue-scheduler-jobs", Expression: JobTemplateCondition}}
	managedJobs := ours("managed-jobs.queue-scheduler.io", JobsPath, "batch", "jobs", admissionregistrationv1.Create)
	managedJobs.FailurePolicy = ptr.To(admissionregistrationv1.Ignore)
	managedJobs.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{schedulingv1beta1.ManagedLabel: "true"}}
	managedJobs.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "managed-jobs", Expression: ManagedJobCondition}}
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{
			ours("queues.queue-scheduler.io", QueuesPath, schedulingv1beta1.GroupName, "queues",
				admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Delete),
			ours("podgroups.queue-scheduler.io", PodGroupsPath, schedulingv1beta1.GroupName, "podgroups", admissionregistrationv1.Create),
			ours("queueunits.queue-scheduler.io", QueueUnitsPath, schedulingv1beta1.GroupName, "queueunits",
				admissionregistrationv1.Create, admissionregistrationv1.Update),
			ours("commands.queue-scheduler.io", CommandsPath, busv1alpha1.GroupName, "commands", admissionregistrationv1.Create),
			pods,
			relabel,
			jobs,
			managedJobs,
		},
	}
}

func versionOf(group string) string {
	switch group {
	case schedulingv1beta1.GroupName:
		return schedulingv1beta1.SchemeGroupVersion.Version
	case busv1alpha1.GroupName:
		return busv1alpha1.SchemeGroupVersion.Version
	}
	return "v1"
}

func rule(group, version, resource string, ops ...admissionregistrationv1.OperationType) admissionregistrationv1.RuleWithOperations {
	return admissionregistrationv1.RuleWithOperations{
		Operations: ops,
		Rule: admissionregistrationv1.Rule{
			APIGroups: []string{group}, APIVersions: []string{version}, Resources: []string{resource},
			Scope: ptr.To(admissionregistrationv1.AllScopes),
		},
	}
}

// ServiceClientConfig reaches the server through a Service, as in a cluster.
func ServiceClientConfig(namespace, service string) func(string) admissionregistrationv1.WebhookClientConfig {
	return func(path string) admissionregistrationv1.WebhookClientConfig {
		return admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
			Namespace: namespace, Name: service, Path: ptr.To(path), Port: ptr.To[int32](443),
		}}
	}
}

// URLClientConfig reaches the server at a URL, as on a local cluster.
func URLClientConfig(base string) func(string) admissionregistrationv1.WebhookClientConfig {
	return func(path string) admissionregistrationv1.WebhookClientConfig {
		return admissionregistrationv1.WebhookClientConfig{URL: ptr.To(base + path)}
	}
}
