package reclaim

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"

	"github.com/queue-scheduler/queue-scheduler/pkg/metrics"
)

// evict takes one victim of the Evaluator's preemption for a single pod.
func (r *Reclaim) evict(ctx context.Context, c preemption.Candidate, preemptor preemption.ExecutorPreemptor, victim *v1.Pod, pluginName string) (bool, error) {
	queue := r.queueOfPreemptor(preemptor)
	by := fmt.Sprintf("%s %s of queue %q", preemptor.Type(), klog.KObj(preemptor), queue)
	waiting, err := r.evictPod(ctx, victim, preemptor.Obj(), queue, by, c.Name(), pluginName)
	if err != nil {
		r.inflight.fail(preemptor.UID(), c.Name(), c.Victims().Pods)
	}
	return waiting, err
}

// evictPod takes one victim: a pod still waiting at Permit is sent back to the queue in memory; any
// other goes through the Eviction API, which honours PodDisruptionBudgets (a refused eviction fails
// this attempt, and the preemptor tries again later). queue is the preemptor's; by names the
// preemptor in the event.
func (r *Reclaim) evictPod(ctx context.Context, victim *v1.Pod, preemptor runtime.Object, queue, by, node, pluginName string) (bool, error) {
	logger := klog.FromContext(ctx)
	victimQueue, _ := r.acct.QueueOf(victim)
	if wp := r.handle.GetWaitingPod(victim.UID); wp != nil && wp.Preempt(pluginName, "preempted") {
		logger.V(2).Info("Waiting pod preempted", "preemptor", by, "victim", klog.KObj(victim), "node", node)
		r.inflight.begin(victim.UID)
		countVictim(queue, victimQueue)
		return true, nil
	}
	// The UID precondition keeps a pod recreated under the victim's name since the dry run safe.
	eviction := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: victim.Name, Namespace: victim.Namespace},
		DeleteOptions: &metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions(string(victim.UID))}}
	err := r.handle.ClientSet().PolicyV1().Evictions(victim.Namespace).Evict(ctx, eviction)
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return false, nil // gone already
	}
	if err != nil && !answered(err) {
		// The call ended without the server's word (cancelled, timed out): the eviction may have
		// been applied, and the victim is taken as leaving until the accounting says otherwise.
		logger.V(2).Info("Eviction unanswered", "victim", klog.KObj(victim), "err", err)
		r.inflight.beginUnsure(victim.UID)
		return false, err
	}
	if err != nil {
		logger.V(2).Info("Eviction refused", "victim", klog.KObj(victim), "err", err)
		r.inflight.drop([]*v1.Pod{victim})
		return false, err
	}
	r.inflight.begin(victim.UID)
	r.handle.EventRecorder().Eventf(victim, preemptor, v1.EventTypeNormal, "Preempted", "Reclaiming",
		"Evicted from queue %q by %s on node %s", victimQueue, by, node)
	logger.V(2).Info("Victim evicted", "preemptor", by, "victim", klog.KObj(victim), "node", node)
	countVictim(queue, victimQueue)
	return false, nil
}

// answered says whether err is the API server's refusal of a request it did not apply (a
// PodDisruptionBudget's 429, a forbidden or invalid request), rather than a call that ended without
// its word: cancelled, timed out, or failed inside the server.
func answered(err error) bool {
	return apierrors.ReasonForError(err) != metav1.StatusReasonUnknown && !apierrors.IsTimeout(err) &&
		!apierrors.IsServerTimeout(err) && !apierrors.IsInternalError(err)
}

// countVictim counts a pod taken for a pod of queue: a preemption within the queue, or a reclaim
// from another.
func countVictim(queue, victimQueue string) {
	if queue == victimQueue {
		metrics.Preemptions.WithLabelValues(queue).Inc()
		return
	}
	metrics.ReclaimEvictions.WithLabelValues(queue, victimQueue).Inc()
}

func (r *Reclaim) queueOfPreemptor(preemptor preemption.ExecutorPreemptor) string {
	for _, pod := range preemptor.Pods() {
		if q, err := r.acct.QueueOf(pod); err == nil {
			return q
		}
	}
	return ""
}
