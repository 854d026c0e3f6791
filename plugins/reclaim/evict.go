package reclaim

import (
	"context"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
)

// evict takes one victim: a pod still waiting at Permit is sent back to the queue in memory; any
// other goes through the Eviction API, which honours PodDisruptionBudgets (a refused eviction fails
// this attempt, and the preemptor tries again later).
func (r *Reclaim) evict(ctx context.Context, c preemption.Candidate, preemptor preemption.ExecutorPreemptor, victim *v1.Pod, pluginName string) (bool, error) {
	logger := klog.FromContext(ctx)
	if wp := r.handle.GetWaitingPod(victim.UID); wp != nil && wp.Preempt(pluginName, "preempted") {
		logger.V(2).Info("Waiting pod preempted", "preemptor", klog.KObj(preemptor), "victim", klog.KObj(victim), "node", c.Name())
		return true, nil
	}
	eviction := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: victim.Name, Namespace: victim.Namespace}}
	err := r.handle.ClientSet().PolicyV1().Evictions(victim.Namespace).Evict(ctx, eviction)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		logger.V(2).Info("Eviction refused", "victim", klog.KObj(victim), "err", err)
		return false, err
	}
	victimQueue, _ := r.acct.QueueOf(victim)
	r.handle.EventRecorder().Eventf(victim, preemptor.Obj(), v1.EventTypeNormal, "Preempted", "Reclaiming",
		"Evicted from queue %q by %s %s of queue %q on node %s", victimQueue, preemptor.Type(), klog.KObj(preemptor), r.queueOfPreemptor(preemptor), c.Name())
	logger.V(2).Info("Victim evicted", "preemptor", klog.KObj(preemptor), "victim", klog.KObj(victim), "node", c.Name())
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
