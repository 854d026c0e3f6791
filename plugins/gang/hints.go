package gang

import (
	"context"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

// EventsToRegister lists the cluster events that can give a rejected gang room. What lets a held gang
// in (its PodGroup admitted, a new member) reaches it through the accounting's PodGroup informer and
// the pod informer (see watch): the scheduler keeps no watch of its own on PodGroups.
func (g *Gang) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		// A bound pod that goes away, or a node that appears or grows, may make room for a gang that
		// did not fit.
		{Event: fwk.ClusterEvent{Resource: fwk.AssignedPod, ActionType: fwk.Delete}, QueueingHintFn: g.isSchedulableAfterPodDelete},
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeAllocatable}},
	}, nil
}

// isSchedulableAfterPodDelete queues pod unless the pod that went away is its own sibling still
// there: the scheduler gave up what it assumed for it (the event kube-scheduler sends when a gang
// gives up its reservations), and the gang has not gained room by it. A sibling deleted for real,
// bound or not, and a pod of an earlier gang of the same name, free room the gang may take.
func (g *Gang) isSchedulableAfterPodDelete(_ klog.Logger, pod *v1.Pod, oldObj, _ any) (fwk.QueueingHint, error) {
	deleted, ok := oldObj.(*v1.Pod)
	if !ok {
		return fwk.Queue, nil
	}
	if key := g.acct.Gangs.Key(deleted); key != "" && key == g.acct.Gangs.Key(pod) && g.stillThere(deleted) {
		return fwk.QueueSkip, nil
	}
	return fwk.Queue, nil
}

// stillThere says whether the pod informer holds pod, the same one, neither being deleted nor
// finished.
func (g *Gang) stillThere(pod *v1.Pod) bool {
	current, err := g.pods.Pods(pod.Namespace).Get(pod.Name)
	return err == nil && current.UID == pod.UID && current.DeletionTimestamp == nil &&
		current.Status.Phase != v1.PodSucceeded && current.Status.Phase != v1.PodFailed
}

// watch lets a gang's held pods in when a member arrives or the PodGroup changes, and forgets what
// is known of bound and deleted members.
func (g *Gang) watch(pods cache.SharedIndexInformer) error {
	if _, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if pod, ok := obj.(*v1.Pod); ok {
				g.activateIfReady(g.acct.Gangs.Key(pod))
			}
		},
		UpdateFunc: func(_, obj any) {
			pod, ok := obj.(*v1.Pod)
			switch {
			case !ok:
			case pod.Spec.NodeName != "":
				g.forget(pod)
			case g.staleNomination(pod):
				g.unnominate.Add(types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name})
			}
		},
		DeleteFunc: func(obj any) {
			if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tombstone.Obj
			}
			if pod, ok := obj.(*v1.Pod); ok {
				g.forget(pod)
				if pod.Spec.NodeName != "" {
					g.freed.podGone(pod)
					g.retryDenied()
				}
			}
		},
	}); err != nil {
		return err
	}
	if _, err := g.handle.SharedInformerFactory().Core().V1().Nodes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if node, ok := obj.(*v1.Node); ok {
				g.freed.nodeAdded(node)
			}
			g.retryDenied()
		},
	}); err != nil {
		return err
	}
	// A queue's new spec (capability, weight, guarantee, reclaimable) may let a rejected gang in, or
	// let it take back its share: recheckHeld brings it back once the snapshots rest on it.
	_, err := g.acct.Store.PodGroupInformer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    g.onPodGroup,
		UpdateFunc: func(_, obj any) { g.onPodGroup(obj) },
		DeleteFunc: func(obj any) {
			if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tombstone.Obj
			}
			if pg, ok := obj.(*schedulingv1beta1.PodGroup); ok {
				g.failures.forget(types.NamespacedName{Namespace: pg.Namespace, Name: pg.Name})
				g.members.forgetGang(pg.Namespace + "/" + pg.Name)
			}
		},
	})
	return err
}

// retryDenied lifts the denial of every rejected gang, now that room was freed, and brings back the
// members it turned away. A bound pod of the gang itself that leaves frees room it may take too: a
// gang deleted and made again under its name finds the pods of the one before on its nodes.
func (g *Gang) retryDenied() {
	for _, key := range g.members.roomFreed() {
		if pods := g.held.Pods(deniedBucket(key)); len(pods) > 0 {
			g.handle.Activate(klog.Background(), pods)
		}
	}
}

// recheckHeld lets in the held gangs that shares computed under new queue specs may let in: a
// capability raised (the snapshot's, which the gate reads) lets a gang whose members asked together
// for more than it run, and a denial made on other specs lapses. Shares computed under the specs of
// the last look change neither.
func (g *Gang) recheckHeld() {
	specs := g.acct.Snapshot().QueueSpecs
	if g.recheckedSpecs.Swap(specs) == specs {
		return
	}
	for _, key := range g.held.Keys() {
		if gang, denied := strings.CutPrefix(key, deniedBucket("")); denied {
			g.retryLapsed(gang)
		} else {
			g.activateIfReady(key)
		}
	}
}

func (g *Gang) onPodGroup(obj any) {
	if pg, ok := obj.(*schedulingv1beta1.PodGroup); ok {
		g.activateIfReady(pg.Namespace + "/" + pg.Name)
	}
}

func (g *Gang) forget(pod *v1.Pod) {
	g.members.release(pod.UID)
	g.held.Remove(pod)
	g.reporter.Released(pod)
}

// activateIfReady brings back the held pods of gang key once it may enter the active queue, and tells
// them why they still wait otherwise (a group admitted to its queue, now waiting for its other members).
func (g *Gang) activateIfReady(key string) {
	if key == "" {
		return
	}
	pods := g.held.Pods(key)
	if len(pods) == 0 {
		return
	}
	pg, ok := g.acct.Gangs.PodGroup(key)
	if !ok {
		return
	}
	if why := g.gate(pg, key); why.Message != "" {
		// Still held, maybe for another reason (admitted, now waiting for the rest of the gang).
		for _, pod := range pods {
			g.reporter.Held(pod, why)
		}
		return
	}
	g.handle.Activate(klog.Background(), pods)
}
