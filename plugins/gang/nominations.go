package gang

import (
	"context"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// A member waiting at Permit is nominated to its node in the API (so that autoscalers see it
// coming); when its gang is rejected, the scheduler clears the nomination, but the two status
// patches race and the nomination can land last. A stale nomination makes the node look taken to
// every pod of the same or lower priority. The plugin clears it, off the scheduling path, for the
// members of a rejected gang that are neither bound nor waiting — not those Reclaim nominated to the
// room it is freeing for them.

// staleNomination says whether pod is a member of a rejected gang left nominated to a node.
func (g *Gang) staleNomination(pod *v1.Pod) bool {
	key := g.acct.Gangs.Key(pod)
	return key != "" && pod.Spec.NodeName == "" && pod.Status.NominatedNodeName != "" &&
		g.members.isDenied(key) && g.handle.GetWaitingPod(pod.UID) == nil && !g.attempts.Reclaiming(key)
}

// runUnnominate clears the stale nominations queued until ctx ends.
func (g *Gang) runUnnominate(ctx context.Context) {
	go func() {
		<-ctx.Done()
		g.unnominate.ShutDown()
	}()
	for {
		key, quit := g.unnominate.Get()
		if quit {
			return
		}
		g.clearNomination(ctx, key)
		g.unnominate.Done(key)
	}
}

func (g *Gang) clearNomination(ctx context.Context, key types.NamespacedName) {
	pod, err := g.handle.SharedInformerFactory().Core().V1().Pods().Lister().Pods(key.Namespace).Get(key.Name)
	if err != nil || !g.staleNomination(pod) {
		return
	}
	_, err = g.handle.ClientSet().CoreV1().Pods(key.Namespace).Patch(ctx, key.Name, types.MergePatchType,
		[]byte(`{"status":{"nominatedNodeName":null}}`), metav1.PatchOptions{}, "status")
	if err != nil && !apierrors.IsNotFound(err) {
		klog.FromContext(ctx).V(2).Info("Could not clear a stale nomination", "pod", key, "err", err)
		g.unnominate.AddRateLimited(key)
		return
	}
	g.unnominate.Forget(key)
}

func newUnnominateQueue(clk clock.WithTicker) workqueue.TypedRateLimitingInterface[types.NamespacedName] {
	return workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName](),
		workqueue.TypedRateLimitingQueueConfig[types.NamespacedName]{Name: "gang-nominations", Clock: clk})
}
