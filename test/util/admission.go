package util

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/queue-scheduler/queue-scheduler/apis/config"
	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned"
)

// admissionSettle bounds the wait for the API server to learn that the webhooks came or went.
const admissionSettle = 30 * time.Second

// WithoutAdmission runs create with the queue-scheduler webhooks unregistered, restoring them after.
// It stands for objects that were stored before the webhook was installed, or while it was bypassed:
// pods that no webhook labelled, queues that lost their parent, pods naming a missing queue.
func WithoutAdmission(t testing.TB, kube kubernetes.Interface, queues versioned.Interface, create func()) {
	t.Helper()
	admission := kube.AdmissionregistrationV1()
	ctx := context.Background()
	validating, err := admission.ValidatingWebhookConfigurations().Get(ctx, config.DefaultConfigurationName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get webhook configuration: %v", err)
	}
	mutating, err := admission.MutatingWebhookConfigurations().Get(ctx, config.DefaultConfigurationName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get mutating webhook configuration: %v", err)
	}
	if err := admission.ValidatingWebhookConfigurations().Delete(ctx, validating.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("unregister webhook: %v", err)
	}
	if err := admission.MutatingWebhookConfigurations().Delete(ctx, mutating.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("unregister mutating webhook: %v", err)
	}
	waitAdmission(t, kube, queues, false)
	defer func() {
		validating.ResourceVersion, mutating.ResourceVersion = "", ""
		if _, err := admission.ValidatingWebhookConfigurations().Create(ctx, validating, metav1.CreateOptions{}); err != nil {
			t.Fatalf("register webhook again: %v", err)
		}
		if _, err := admission.MutatingWebhookConfigurations().Create(ctx, mutating, metav1.CreateOptions{}); err != nil {
			t.Fatalf("register mutating webhook again: %v", err)
		}
		waitAdmission(t, kube, queues, true)
	}()
	create()
}

// waitAdmission waits until the API server does (or no longer does) call the webhooks, which it
// learns of through its own informers: a dry-run queue naming a missing parent probes the validating
// webhooks, a dry-run pod without a queue label the mutating ones.
func waitAdmission(t testing.TB, kube kubernetes.Interface, queues versioned.Interface, on bool) {
	t.Helper()
	probe := MakeQueue("admission-probe").Parent("no-such-parent-probe").Obj()
	pod := MakePod(metav1.NamespaceDefault, "admission-probe").Obj()
	dryRun := []string{metav1.DryRunAll}
	err := wait.PollUntilContextTimeout(context.Background(), PollInterval, admissionSettle, true, func(ctx context.Context) (bool, error) {
		_, err := queues.SchedulingV1beta1().Queues().Create(ctx, probe, metav1.CreateOptions{DryRun: dryRun})
		mutated, podErr := kube.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{DryRun: dryRun})
		labelled := podErr == nil && mutated.Labels[schedulingv1beta1.QueueLabel] != ""
		return (err != nil) == on && labelled == on, nil
	})
	if err != nil {
		t.Fatalf("webhook still %v after %s", map[bool]string{true: "off", false: "on"}[on], admissionSettle)
	}
}
