package controller

import (
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	busv1alpha1 "github.com/queue-scheduler/queue-scheduler/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

// byGroup indexes PodGroup members by "namespace/group".
const byGroup = "group"

// addEventHandlers turns every change that can alter a status, a cascade or a Command into a key.
func (c *Controller) addEventHandlers(members cache.SharedIndexInformer) error {
	v1beta1 := c.acct.Informers.Scheduling().V1beta1()
	if _, err := v1beta1.Queues().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.onQueue,
		UpdateFunc: func(old, obj any) {
			if !usageOnly(old, obj) {
				c.onQueue(obj)
			}
		},
		DeleteFunc: func(obj any) { c.onQueue(unwrap(obj)) },
	}); err != nil {
		return err
	}
	registrations := []struct {
		informer cache.SharedIndexInformer
		handler  func(any)
	}{
		{v1beta1.PodGroups().Informer(), c.onPodGroup},
		{v1beta1.QueueUnits().Informer(), c.onQueueUnit},
		{c.acct.Informers.Bus().V1alpha1().Commands().Informer(), c.onCommand},
		{members, c.onMember},
	}
	for _, r := range registrations {
		handle := r.handler
		if _, err := r.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    handle,
			UpdateFunc: func(_, obj any) { handle(obj) },
			DeleteFunc: func(obj any) { handle(unwrap(obj)) },
		}); err != nil {
			return err
		}
	}
	// Pods that came past the webhook name their gang without the label the member informer
	// selects by; the scheduler's informer sees them.
	if err := c.acct.Gangs.OnUnlabeledPod(func(pod *v1.Pod) { c.onMember(pod) }); err != nil {
		return err
	}
	c.acct.Events.QueueUsage.Subscribe(c.enqueueQueueForUsage)
	c.acct.Events.Deserved.Subscribe(c.enqueueQueuePaced)
	c.acct.Events.Reservation.Subscribe(c.enqueuePodGroup)
	c.acct.Events.WorkReleased.Subscribe(c.onWorkReleased)
	if err := c.acct.Pods.OnPodFinished(c.view.LearnRuntime); err != nil {
		return err
	}
	return c.acct.Store.OnNamespaceLabels(c.onNamespaceLabels)
}

// onWorkReleased retries the Pending PodGroups of the tree of a queue whose admitted work gave back
// room it reserved, and the Enqueued units: the reservation counted against every capability on the queue's path, which the
// work of every queue below them counts, so work of any queue of the tree may enter now.
func (c *Controller) onWorkReleased(queue string) {
	for _, q := range c.acct.Store.TreeOf(queue) {
		c.enqueuePending(q)
	}
	c.offerRoomToUnits()
}

// onNamespaceLabels retries the namespace's Pending PodGroups and the Enqueued units: the queues that
// select the namespace may have changed.
func (c *Controller) onNamespaceLabels(namespace string) {
	groups, err := c.acct.Store.PodGroups().PodGroups(namespace).List(labels.Everything())
	if err == nil {
		for _, pg := range groups {
			if pg.Status.Phase == "" || pg.Status.Phase == schedulingv1beta1.PodGroupPending {
				c.enqueuePodGroup(pg.Namespace + "/" + pg.Name)
			}
		}
	}
	c.enqueueDequeue()
}

func unwrap(obj any) any {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return tombstone.Obj
	}
	return obj
}

// usageOnly says whether a queue's update changed only what its status reports of its usage: the
// controller's own usage writes, the most frequent updates by far. They change nothing this
// controller acts on (a queue's status is written from the accounting, not from itself), so they are
// not synced again: that would write again at once, past the pacing of usage writes.
func usageOnly(oldObj, obj any) bool {
	old, okOld := oldObj.(*schedulingv1beta1.Queue)
	q, ok := obj.(*schedulingv1beta1.Queue)
	return okOld && ok && old.Generation == q.Generation && old.DeletionTimestamp.Equal(q.DeletionTimestamp) &&
		maps.Equal(old.Labels, q.Labels) && maps.Equal(old.Annotations, q.Annotations) &&
		slices.Equal(old.Finalizers, q.Finalizers) && old.Status.State == q.Status.State &&
		apiequality.Semantic.DeepEqual(old.Status.Conditions, q.Status.Conditions)
}

// onQueue syncs the queue and the queues below it, whose state depends on it, and the queues of a
// cycle its parent chain runs into: a cycle stored by two re-parentings at once is reported on every
// queue in it.
func (c *Controller) onQueue(obj any) {
	q, ok := obj.(*schedulingv1beta1.Queue)
	if !ok {
		return
	}
	seen := map[string]bool{}
	var below func(name string)
	below = func(name string) {
		if seen[name] {
			return
		}
		seen[name] = true
		c.enqueueQueue(name)
		for _, child := range c.acct.Store.Children(name) {
			below(child.Name)
		}
	}
	below(q.Name)
	for _, name := range c.acct.Store.CycleAbove(q.Name) {
		below(name)
	}
}

func (c *Controller) onPodGroup(obj any) {
	if pg, ok := obj.(*schedulingv1beta1.PodGroup); ok {
		c.enqueuePodGroup(pg.Namespace + "/" + pg.Name)
		c.enqueueQueueForWork(c.acct.Store.QueueOfPodGroup(pg))
		if source := pg.Labels[schedulingv1beta1.GangSourceLabel]; source != "" {
			c.enqueueGang(gangKey(schedulingv1beta1.GangSource(source), pg.Namespace, pg.Name))
		}
	}
}

func (c *Controller) onQueueUnit(obj any) {
	if u, ok := obj.(*schedulingv1beta1.QueueUnit); ok {
		c.enqueueQueueForWork(c.acct.Store.QueueOfQueueUnit(u))
		c.enqueueDequeue()
	}
}

func (c *Controller) onCommand(obj any) {
	if cmd, ok := obj.(*busv1alpha1.Command); ok {
		c.enqueueCommand(cmd.Namespace + "/" + cmd.Name)
	}
}

// onMember syncs the pod's PodGroup and, for a pod that names another API's PodGroup, that one: a
// PodGroup of an API shared with other schedulers becomes queue-scheduler's with its first pod.
func (c *Controller) onMember(obj any) {
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return
	}
	group, ok := c.acct.Gangs.Name(pod)
	if !ok {
		return
	}
	c.enqueuePodGroup(group.String())
	for _, ref := range schedulingv1beta1.GangRefs(pod) {
		if ref.Source != "" && ref.Name == group.Name {
			c.enqueueGang(gangKey(ref.Source, pod.Namespace, ref.Name))
		}
	}
}
