package accounting

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	listers "github.com/queue-scheduler/queue-scheduler/pkg/generated/listers/scheduling/v1beta1"
)

// byPodGroup indexes the scheduler's pods by "namespace/podgroup".
const byPodGroup = "queue-scheduler.io/pod-group"

// Gangs says which gang a pod belongs to, by the one rule the admission webhook labels pods by, and
// finds a gang's PodGroup and its members in the scheduler's pod informer, which it indexes by gang.
type Gangs struct {
	// takesGangsOf says whether the PodGroups of another gang API are gangs of queue-scheduler.
	takesGangsOf func(schedulingv1beta1.GangSource) bool
	podGroups    listers.PodGroupLister
	// informer is the scheduler's pod informer, and members its store, indexed by gang.
	informer cache.SharedIndexInformer
	members  cache.Indexer
}

// Index indexes pods by "namespace/podgroup" of their gang (Key), for any pod informer.
func (g *Gangs) Index(obj any) ([]string, error) {
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return nil, nil
	}
	if key := g.Key(pod); key != "" {
		return []string{key}, nil
	}
	return nil, nil
}

// gangIndex indexes the scheduler's pod informer by PodGroup.
func (a *Accounting) gangIndex(pods cache.SharedIndexInformer) error {
	if err := pods.AddIndexers(cache.Indexers{byPodGroup: a.Gangs.Index}); err != nil {
		return err
	}
	a.Pods.live, a.Pods.informer = pods.GetIndexer(), pods
	a.Gangs.members, a.Gangs.informer = pods.GetIndexer(), pods
	return nil
}

// OnUnlabeledPod calls handle with every change of a pod of queue-scheduler, not finished, that
// belongs to a gang only by naming another API's PodGroup: a pod that came past the admission
// webhook, which would have given it the pod-group label. Whoever watches the labelled pods alone
// learns of these here.
func (g *Gangs) OnUnlabeledPod(handle func(*v1.Pod)) error {
	call := func(obj any) {
		if pod := podOf(obj); pod != nil {
			handle(pod)
		}
	}
	_, err := g.informer.AddEventHandler(cache.FilteringResourceEventHandler{
		FilterFunc: func(obj any) bool {
			pod := podOf(obj)
			return isQueuePod(pod) && pod.Labels[schedulingv1beta1.PodGroupLabel] == "" && g.Key(pod) != ""
		},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    call,
			UpdateFunc: func(_, obj any) { call(obj) },
			DeleteFunc: call,
		},
	})
	return err
}

// podOf is the pod of an informer's event, a deletion's tombstone included, or nil.
func podOf(obj any) *v1.Pod {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	pod, _ := obj.(*v1.Pod)
	return pod
}

// UnlabeledMembers are the live pods of queue-scheduler of the PodGroup key ("namespace/name")
// that belong to it only by naming another API's PodGroup.
func (g *Gangs) UnlabeledMembers(key string) []*v1.Pod {
	members := g.Members(key)
	out := members[:0]
	for _, pod := range members {
		if pod.Labels[schedulingv1beta1.PodGroupLabel] == "" && isQueuePod(pod) {
			out = append(out, pod)
		}
	}
	return out
}

// Members returns the live pods of the PodGroup key ("namespace/name") from the scheduler's pod
// informer, whose store is current before any of its handlers run: not finished, not being deleted.
func (g *Gangs) Members(key string) []*v1.Pod {
	objs, _ := g.members.ByIndex(byPodGroup, key)
	out := make([]*v1.Pod, 0, len(objs))
	for _, obj := range objs {
		pod, ok := obj.(*v1.Pod)
		if !ok || pod.DeletionTimestamp != nil || pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed {
			continue
		}
		out = append(out, pod)
	}
	return out
}

// PodGroup returns the PodGroup "namespace/name" from the cache, or false when it does not exist.
func (g *Gangs) PodGroup(key string) (*schedulingv1beta1.PodGroup, bool) {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil, false
	}
	pg, err := g.podGroups.PodGroups(namespace).Get(name)
	return pg, err == nil
}

// Key is "namespace/name" of the PodGroup of queue-scheduler the pod belongs to, or "" for a pod
// of no gang, by the rule the admission webhook labels pods by (schedulingv1beta1.GangOf): a pod that
// came past the webhook is counted in its gang all the same.
func (g *Gangs) Key(pod *v1.Pod) string {
	if name, ok := schedulingv1beta1.GangOf(pod, g.takesGangsOf); ok {
		return pod.Namespace + "/" + name
	}
	return ""
}

// Name is Key as a name; ok is false for a pod of no gang.
func (g *Gangs) Name(pod *v1.Pod) (group types.NamespacedName, ok bool) {
	name, ok := schedulingv1beta1.GangOf(pod, g.takesGangsOf)
	return types.NamespacedName{Namespace: pod.Namespace, Name: name}, ok
}

// Takes says whether the PodGroups of source are gangs of queue-scheduler.
func (g *Gangs) Takes(source schedulingv1beta1.GangSource) bool {
	return g.takesGangsOf(source)
}
