package proportion

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/holdreport"
)

// PreEnqueue holds back, before any scheduling attempt, the pods that no new node can help: those
// whose request exceeds their queue's (or an ancestor's) capability on its own, which wait until it
// is raised, and those whose queue (or an ancestor) is at its capability, unless a lower-priority pod of the queue could
// make room by preemption. It also holds, for a moment, a pod whose queue the snapshot has Suspended
// while the queue's informer store has it schedule: the report is written only if the wait lasts
// (holdreport.ReportDelay). Every other refusal goes on to PreFilter, where the framework reports it
// Unschedulable and reclaim may make room: there, a node would help.
func (p *Proportion) PreEnqueue(ctx context.Context, pod *v1.Pod) *fwk.Status {
	queue, err := p.acct.QueueOf(pod)
	if err != nil {
		return nil // QueueState holds pods whose queue is unknown.
	}
	why := p.hold(pod, queue)
	if why.Message == "" {
		p.Release(pod)
		return nil
	}
	p.line.held(pod)
	p.Reporter.Held(pod, why)
	klog.FromContext(ctx).V(5).Info("Pod held by its queue's share", "pod", klog.KObj(pod), "reason", why.Message)
	return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, why.Message)
}

// hold indexes the pod under what can end its hold before checking, so that a change after the
// check finds it, and says why it is held, or nothing when it goes on to scheduling.
func (p *Proportion) hold(pod *v1.Pod, queue string) holdreport.Why {
	// The pods of a QueueUnit still Enqueued are QueueUnit's to hold: the unit's admission decides
	// when they go, and its report says so. The framework runs PreEnqueue plugins in no fixed order
	// (it keeps them in a map), so this plugin may see such a pod first.
	if u := p.acct.Store.UnitOf(pod); u != nil && !u.Dequeued() {
		return holdreport.Why{}
	}
	p.Held.Add(pod, queue)
	req := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	p.acct.Pods.Count(pod)
	refusal := p.acct.AdmitPod(p.acct.Snapshot(), pod, queue, req)
	switch {
	case refusal == nil:
		return holdreport.Why{}
	case refusal.Suspended:
		if q, ok := p.acct.Store.Queue(queue); !ok || p.acct.Store.SchedulingState(q) == schedulingv1beta1.QueueStateSuspended {
			return holdreport.Why{} // QueueState holds the pods of a Suspended queue
		}
		// The queue's informer store has it schedule, the snapshot does not yet: the change reached
		// the store (and QueueState's gate, which let the pod in) before the accounting's handler,
		// whose next snapshot lets the pod in again. Indexed, then checked again: a snapshot built
		// in between finds it, or this one sees the change.
		p.Held.Add(pod, changedBucket)
		if q := p.acct.Snapshot().Queue(queue); q == nil || !q.Suspended {
			return holdreport.Why{}
		}
		return holdreport.Why{Message: fmt.Sprintf("waiting for queue %q's change of a moment ago to reach the snapshot", queue)}
	case refusal.ExceedsCapability:
		return holdreport.Why{Reason: holdreport.ExceedsCapability, Message: refusal.Message}
	case refusal.AtCapability && !p.mayPreemptWithin(pod, queue):
		return holdreport.Why{Reason: holdreport.QueueCapability, Message: refusal.Message}
	default:
		return holdreport.Why{}
	}
}

// mayPreemptWithin says whether a preemption could make room for pod in its queue: the pod may
// preempt, and the queue has a bound pod of lower priority.
func (p *Proportion) mayPreemptWithin(pod *v1.Pod, queue string) bool {
	if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy == v1.PreemptNever {
		return false
	}
	return p.acct.Pods.HasBoundBelow(queue, corev1helpers.PodPriority(pod))
}
