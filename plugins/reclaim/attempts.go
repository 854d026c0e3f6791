package reclaim

import (
	"context"
	"fmt"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/queue-scheduler/queue-scheduler/pkg/gangs"
)

// nominate holds the room freed on node for a member other than the pod of the cycle: in the
// scheduler's memory at once, and in the pod's status so that the member's own next cycle keeps it.
func (r *Reclaim) nominate(ctx context.Context, member *v1.Pod, node string) {
	pi, err := framework.NewPodInfo(member)
	if err != nil {
		return
	}
	r.handle.AddNominatedPod(klog.FromContext(ctx), pi, &fwk.NominatingInfo{NominatedNodeName: node, NominatingMode: fwk.ModeOverride})
	go r.patchNomination(context.WithoutCancel(ctx), member, node)
}

// expire releases the nominations of an attempt whose members did not all bind in time, and brings
// the members back to try again.
func (r *Reclaim) expire(at *gangs.Attempt) {
	ctx := context.Background()
	lister := r.handle.SharedInformerFactory().Core().V1().Pods().Lister()
	var back []*v1.Pod
	for _, m := range r.acct.Gangs.Members(at.Key) {
		if _, ok := at.Nominated[m.UID]; !ok || m.Spec.NodeName != "" {
			continue
		}
		r.handle.DeleteNominatedPodIfExists(m)
		r.nominated.forget(m.UID)
		if pod, err := lister.Pods(m.Namespace).Get(m.Name); err == nil && pod.Status.NominatedNodeName != "" {
			r.patchNomination(ctx, pod, "")
		}
		back = append(back, m)
	}
	if len(back) == 0 {
		return
	}
	klog.FromContext(ctx).V(2).Info("Gang reclaim expired; nominations released", "podGroup", at.Key, "members", len(back))
	r.handle.Activate(klog.FromContext(ctx), podsByName(back))
}

// patchNomination sets (or, with node "", clears) the pod's status.nominatedNodeName.
func (r *Reclaim) patchNomination(ctx context.Context, pod *v1.Pod, node string) {
	value := "null"
	if node != "" {
		value = fmt.Sprintf("%q", node)
	}
	patch := fmt.Sprintf(`{"status":{"nominatedNodeName":%s}}`, value)
	_, err := r.handle.ClientSet().CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
	if err != nil && !apierrors.IsNotFound(err) {
		klog.FromContext(ctx).V(2).Info("Could not patch a nomination", "pod", klog.KObj(pod), "node", node, "err", err)
	}
}

// evictAll evicts the victims of a gang's attempt, several at a time. When an eviction fails (the
// victim stays), the attempt ends at once: its nominations are released, and the gang may try again.
func (r *Reclaim) evictAll(ctx context.Context, at *gangs.Attempt, preemptor *v1.Pod, by string) {
	var failed atomic.Bool
	queue, _ := r.acct.QueueOf(preemptor)
	workqueue.ParallelizeUntil(ctx, 16, len(at.Victims), func(i int) {
		if _, err := r.evictPod(ctx, at.Victims[i], preemptor, queue, by, at.Victims[i].Spec.NodeName, Name); err != nil {
			klog.FromContext(ctx).V(2).Info("Gang reclaim: eviction failed", "victim", klog.KObj(at.Victims[i]), "err", err)
			failed.Store(true)
		}
	})
	if failed.Load() && r.attempts.End(at) {
		r.expire(at)
	}
}

func podsByName(pods []*v1.Pod) map[string]*v1.Pod {
	out := make(map[string]*v1.Pod, len(pods))
	for _, p := range pods {
		out[p.Namespace+"/"+p.Name] = p
	}
	return out
}
