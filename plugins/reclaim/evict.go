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
)

// evict takes one victim of the Evaluator's preemption for a single pod.
func (r *Reclaim) evict(ctx context.Context, c preemption.Candidate, preemptor preemption.ExecutorPreemptor, victim *v1.Pod, pluginName string) (bool, error) {
	by := fmt.Sprintf("%s %s of queue %q", preemptor.Type(), klog.KObj(preemptor), r.queueOfPreemptor(preemptor))
	return r.evictPod(ctx, victim, preemptor.Obj(), by, c.Name(), pluginName)
}

// evictPod takes one victim: a pod still waiting at Permit is sent back to the queue in memory; any
// other goes through the Eviction API, which honours PodDisruptionBudgets (a refused eviction fails
// this attempt, and the preemptor tries again later). by names the preemptor in the event.
func (r *Reclaim) evictPod(ctx context.Context, victim *v1.Pod, preemptor runtime.Object, by, node, pluginName string) (bool, error) {
	logger := klog.FromContext(ctx)
	if wp := r.handle.GetWaitingPod(victim.UID); wp != nil && wp.Preempt(pluginName, "preempted") {
		logger.V(2).Info("Waiting pod preempted", "preemptor", by, "victim", klog.KObj(victim), "node", node)
		return true, nil
	}
	// The UID precondition keeps a pod recreated under the victim's name since the dry run safe.
	eviction := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: victim.Name, Namespace: victim.Namespace},
		DeleteOptions: &metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions(string(victim.UID))}}
	err := r.handle.ClientSet().PolicyV1().Evictions(victim.Namespace).Evict(ctx, eviction)
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return false, nil // gone already
	}
	if err != nil {
		logger.V(2).Info("Eviction refused", "victim", klog.KObj(victim), "err", err)
		r.inflight.drop(victim.UID)
		return false, err
	}
	victimQueue, _ := r.acct.QueueOf(victim)
	r.handle.EventRecorder().Eventf(victim, preemptor, v1.EventTypeNormal, "Preempted", "Reclaiming",
		"Evicted from queue %q by %s on node %s", victimQueue, by, node)
	logger.V(2).Info("Victim evicted", "preemptor", by, "victim", klog.KObj(victim), "node", node)
	return false, nil
}

func (r *Reclaim) queueOfPreemptor(preemptor preemption.ExecutorPreemptor) string {
	for _, pod := range preemptor.Pods() {
		if q, err := r.acct.QueueOf(pod); err == nil {
			return q
		}
	}
	return ""
}
