package reclaim

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// attemptSlack is how long an attempt lasts beyond its victims' longest grace period: then the
// nominations it made are released, and the gang may try again.
const attemptSlack = 30 * time.Second

// attempts remembers, per gang, the reclaim under way: where its missing members were nominated
// and which victims must go before they fit. While one is under way, the gang evicts nothing more.
type attempts struct {
	mu     sync.Mutex
	byGang map[string]*attempt
}

type attempt struct {
	key       string
	nominated map[types.UID]string
	victims   []*v1.Pod
	deadline  time.Time
}

func newAttempts() *attempts { return &attempts{byGang: map[string]*attempt{}} }

// begin records the attempt of the gang key and calls expire with it once it lasted longer than its
// victims' grace periods and attemptSlack, unless a later attempt of the gang replaced it.
func (a *attempts) begin(key string, nominated map[types.UID]string, victims []*v1.Pod, expire func(*attempt)) *attempt {
	at := &attempt{key: key, nominated: nominated, victims: victims,
		deadline: time.Now().Add(longestGrace(victims) + attemptSlack)}
	a.mu.Lock()
	a.byGang[key] = at
	a.mu.Unlock()
	time.AfterFunc(time.Until(at.deadline), func() {
		if a.end(at) {
			expire(at)
		}
	})
	return at
}

// end forgets the attempt and says whether it was still the gang's.
func (a *attempts) end(at *attempt) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.byGang[at.key] != at {
		return false
	}
	delete(a.byGang, at.key)
	return true
}

// underWay returns, while the gang's victims are not all gone (counted says a victim still holds its
// room), the node member was nominated to and why the gang waits. Once they are gone, a member that
// still does not fit may try again; the attempt is kept until it expires, which releases the
// nominations of the members that did not bind.
func (a *attempts) underWay(key string, member types.UID, counted func(*v1.Pod) bool) (string, string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	at := a.byGang[key]
	if at == nil {
		return "", "", false
	}
	left := 0
	for _, v := range at.victims {
		if counted(v) {
			left++
		}
	}
	if left == 0 {
		return "", "", false
	}
	return at.nominated[member], fmt.Sprintf("podgroup %s: waiting for %d of the %d pods evicted for it to leave", key, left, len(at.victims)), true
}

func longestGrace(pods []*v1.Pod) time.Duration {
	var longest int64
	for _, p := range pods {
		if g := p.Spec.TerminationGracePeriodSeconds; g != nil {
			longest = max(longest, *g)
		}
	}
	return time.Duration(longest) * time.Second
}

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
func (r *Reclaim) expire(at *attempt) {
	r.acct.ReclaimOver(at.key)
	ctx := context.Background()
	lister := r.handle.SharedInformerFactory().Core().V1().Pods().Lister()
	var back []*v1.Pod
	for _, m := range r.acct.GangMembers(at.key) {
		if _, ok := at.nominated[m.UID]; !ok || m.Spec.NodeName != "" {
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
	klog.FromContext(ctx).V(2).Info("Gang reclaim expired; nominations released", "podGroup", at.key, "members", len(back))
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
func (r *Reclaim) evictAll(ctx context.Context, at *attempt, preemptor *v1.Pod, by string) {
	var failed atomic.Bool
	queue, _ := r.acct.QueueOf(preemptor)
	workqueue.ParallelizeUntil(ctx, 16, len(at.victims), func(i int) {
		if _, err := r.evictPod(ctx, at.victims[i], preemptor, queue, by, at.victims[i].Spec.NodeName, Name); err != nil {
			klog.FromContext(ctx).V(2).Info("Gang reclaim: eviction failed", "victim", klog.KObj(at.victims[i]), "err", err)
			failed.Store(true)
		}
	})
	if failed.Load() && r.attempts.end(at) {
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
