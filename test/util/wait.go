package util

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

// PollInterval is how often the wait helpers look.
const PollInterval = 100 * time.Millisecond

// WaitForPods polls until ok holds for every named pod, or fails after timeout with the last state
// of the pods that did not satisfy it.
func WaitForPods(ctx context.Context, client kubernetes.Interface, namespace string, names []string, timeout time.Duration, what string, ok func(*v1.Pod) bool) error {
	var waiting []string
	// seen keeps each pod's latest state: the last poll's reads may fail as the timeout ends.
	seen := map[string]string{}
	err := wait.PollUntilContextTimeout(ctx, PollInterval, timeout, true, func(ctx context.Context) (bool, error) {
		waiting = waiting[:0]
		for _, name := range names {
			pod, err := client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
			switch {
			case err != nil && seen[name] == "":
				waiting = append(waiting, name+" ("+err.Error()+")")
			case err != nil:
				waiting = append(waiting, seen[name])
			case !ok(pod):
				seen[name] = describe(name, pod)
				waiting = append(waiting, seen[name])
			}
		}
		return len(waiting) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("pods %v in %s not %s within %s: %w", waiting, namespace, what, timeout, err)
	}
	return nil
}

// describe names a pod with where it stands: its node, or why it is not scheduled.
func describe(name string, pod *v1.Pod) string {
	switch {
	case pod.Spec.NodeName != "":
		return name + " (bound to " + pod.Spec.NodeName + ")"
	case PodScheduledCondition(pod) != nil:
		return name + " (" + PodScheduledCondition(pod).Message + ")"
	default:
		return name + " (pending, no condition)"
	}
}

// IsBound says whether the pod has a node.
func IsBound(pod *v1.Pod) bool { return pod.Spec.NodeName != "" }

// PodScheduledCondition returns the pod's PodScheduled condition, or nil.
func PodScheduledCondition(pod *v1.Pod) *v1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == v1.PodScheduled {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// HasUnschedulableMessage says whether the pod is unbound with PodScheduled=False and a message
// containing text.
func HasUnschedulableMessage(text string) func(*v1.Pod) bool {
	return func(pod *v1.Pod) bool {
		c := PodScheduledCondition(pod)
		return pod.Spec.NodeName == "" && c != nil && c.Status == v1.ConditionFalse && strings.Contains(c.Message, text)
	}
}

// WaitForEvent polls until an event with reason about the named object has a message containing text.
func WaitForEvent(ctx context.Context, client kubernetes.Interface, namespace, object, reason, text string, timeout time.Duration) error {
	selector := fields.Set{"involvedObject.name": object, "reason": reason}.AsSelector().String()
	var seen []string
	err := wait.PollUntilContextTimeout(ctx, PollInterval, timeout, true, func(ctx context.Context) (bool, error) {
		seen = eventMessages(ctx, client, namespace, selector, seen)
		return slices.ContainsFunc(seen, func(m string) bool { return strings.Contains(m, text) }), nil
	})
	if err != nil {
		return fmt.Errorf("no %s event for %s/%s containing %q within %s (seen %q): %w", reason, namespace, object, text, timeout, seen, err)
	}
	return nil
}

// WaitForEventMessages polls until namespace holds at least n events with reason, and returns their
// messages; on timeout, the error lists those seen.
func WaitForEventMessages(ctx context.Context, client kubernetes.Interface, namespace, reason string, n int, timeout time.Duration) ([]string, error) {
	selector := fields.Set{"reason": reason}.AsSelector().String()
	var messages []string
	err := wait.PollUntilContextTimeout(ctx, PollInterval, timeout, true, func(ctx context.Context) (bool, error) {
		messages = eventMessages(ctx, client, namespace, selector, messages)
		return len(messages) >= n, nil
	})
	if err != nil {
		return nil, fmt.Errorf("%d %s events in %s within %s, want %d (seen %q): %w", len(messages), reason, namespace, timeout, n, messages, err)
	}
	return messages, nil
}

// eventMessages lists the messages of the events of namespace that selector selects; when the
// listing fails it returns last, the messages of the listing before, for the caller's report.
func eventMessages(ctx context.Context, client kubernetes.Interface, namespace, selector string, last []string) []string {
	events, err := client.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: selector})
	if err != nil {
		return last
	}
	out := make([]string, 0, len(events.Items))
	for _, e := range events.Items {
		out = append(out, e.Message)
	}
	return out
}

// BoundPerPodGroup counts the bound, live pods of each PodGroup in pods, by their pod-group label.
func BoundPerPodGroup(pods []v1.Pod) map[string]int {
	out := map[string]int{}
	for _, p := range pods {
		if p.Spec.NodeName != "" && p.DeletionTimestamp == nil {
			out[p.Labels[schedulingv1beta1.PodGroupLabel]]++
		}
	}
	return out
}
