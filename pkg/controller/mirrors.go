package controller

import (
	"context"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/gangsource"
)

// mirrorRetry is how long a source PodGroup that could not be mirrored waits before it is tried
// again: the queue that refused it may take it later.
const mirrorRetry = 15 * time.Second

// gangKey is the workqueue key of a source's PodGroup: "source/namespace/name".
func gangKey(source schedulingv1beta1.GangSource, namespace, name string) string {
	return string(source) + "/" + namespace + "/" + name
}

func (c *Controller) onGangSource(source gangsource.Source, obj metav1.Object) {
	c.enqueueGang(gangKey(source.Name(), obj.GetNamespace(), obj.GetName()))
}

func gangQueue(w *workqueues) workqueue.TypedRateLimitingInterface[string] { return w.gangs }

func (c *Controller) enqueueGang(key string) { c.enqueue(gangQueue, key) }

func (c *Controller) enqueueGangAfter(key string, after time.Duration) {
	c.enqueueAfter(gangQueue, key, after)
}

// syncGang keeps the mirror of a source's PodGroup — queue-scheduler's PodGroup of the same name,
// which the scheduler and the accounting read — in step with its source, deletes it with its source,
// and writes the source's status from it.
func (c *Controller) syncGang(ctx context.Context, key string) error {
	name, nsName, _ := strings.Cut(key, "/")
	source := c.gangs.Source(schedulingv1beta1.GangSource(name))
	if source == nil {
		return nil
	}
	obj, known := c.gangs.Get(source.Name(), nsName)
	if !known {
		if c.gangs.Watched(source.Name()) {
			// Its informer is still listing: the key comes back, backing off, until they are known.
			return fmt.Errorf("the PodGroups of gang source %s are not listed yet", source.Name())
		}
		return nil
	}
	namespace, pgName, err := splitKey(nsName)
	if err != nil {
		return nil
	}
	mirror, err := c.acct.Store.PodGroups().PodGroups(namespace).Get(pgName)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if err != nil {
		mirror = nil
	}
	if obj == nil || obj.GetDeletionTimestamp() != nil {
		return c.deleteMirror(ctx, source, mirror)
	}
	if mirror == nil && !source.Eager(obj) && len(c.membersByKey(nsName)) == 0 {
		return nil // not queue-scheduler's until a pod of queue-scheduler names it
	}
	mirror, refusal, err := c.ensureMirror(ctx, source, obj, mirror)
	if err != nil {
		return err
	}
	if refusal != "" {
		c.recordOn(source, obj, v1.EventTypeWarning, "NotMirrored", refusal)
		c.enqueueGangAfter(key, mirrorRetry)
	}
	if refusal == "" && mirror != nil && mirror.Status.Phase == "" {
		// The mirror's first status, on its way, brings the key back: the source's status says
		// nothing before it that it would not say a moment later.
		return nil
	}
	m := gangsource.Mirror{PodGroup: mirror, Refusal: refusal, Now: c.clock.Now()}
	if mirror != nil {
		m.Members, m.Queue = c.membersOf(mirror), c.acct.Store.QueueOfPodGroup(mirror)
	}
	err = source.WriteStatus(ctx, obj, m)
	return ignoreGoneOrStale(err)
}

// ensureMirror creates or updates the mirror of obj. refusal says why there is none: the admission
// webhook refused it (the queue does not take the namespace, say) or another PodGroup has its name.
func (c *Controller) ensureMirror(ctx context.Context, source gangsource.Source, obj metav1.Object,
	mirror *schedulingv1beta1.PodGroup) (*schedulingv1beta1.PodGroup, string, error) {
	spec := source.Mirror(obj)
	api := c.acct.Client.SchedulingV1beta1().PodGroups(obj.GetNamespace())
	if mirror != nil && mirroredBefore(source, mirror, obj) {
		// The source was deleted and created again under its name (an operator restarting its job):
		// the mirror of the one before goes, and the new one gets a mirror of its own.
		if err := c.deleteMirror(ctx, source, mirror); err != nil {
			return nil, "", err
		}
		mirror = nil
	}
	switch {
	case mirror == nil:
		created, err := api.Create(ctx, &schedulingv1beta1.PodGroup{
			ObjectMeta: metav1.ObjectMeta{Name: obj.GetName(), Namespace: obj.GetNamespace(),
				Labels:          map[string]string{schedulingv1beta1.GangSourceLabel: string(source.Name())},
				OwnerReferences: []metav1.OwnerReference{gangsource.OwnerReference(source, obj)}},
			Spec: spec,
		}, metav1.CreateOptions{})
		if apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err) {
			return nil, fmt.Sprintf("queue-scheduler cannot take the gang: %v", err), nil
		}
		return created, "", err
	case !mirrors(mirror, obj.GetUID()):
		return nil, fmt.Sprintf("PodGroup %s/%s of queue-scheduler exists and does not stand for this %s; rename one of them",
			mirror.Namespace, mirror.Name, source.GroupVersionKind().Kind), nil
	}
	spec.Queue = mirror.Spec.Queue // decided when the mirror was created, as for any PodGroup
	if apiequality.Semantic.DeepEqual(spec, mirror.Spec) {
		return mirror, "", nil
	}
	updated := mirror.DeepCopy()
	updated.Spec = spec
	updated, err := api.Update(ctx, updated, metav1.UpdateOptions{})
	return updated, "", err
}

// mirrors says whether pg is the mirror of the source PodGroup of that UID.
func mirrors(pg *schedulingv1beta1.PodGroup, uid types.UID) bool {
	ref := metav1.GetControllerOfNoCopy(pg)
	return pg.Labels[schedulingv1beta1.GangSourceLabel] != "" && ref != nil && ref.UID == uid
}

// mirroredBefore says whether pg mirrors an earlier PodGroup of the source by obj's name: a source
// PodGroup deleted and created again before its mirror went. The mirror is older than obj; a
// mirror newer than obj stands for a source the cache has not seen yet, and is left alone.
func mirroredBefore(source gangsource.Source, pg *schedulingv1beta1.PodGroup, obj metav1.Object) bool {
	ref := metav1.GetControllerOfNoCopy(pg)
	return pg.Labels[schedulingv1beta1.GangSourceLabel] == string(source.Name()) && ref != nil &&
		ownedBySource(source, *ref) && ref.UID != obj.GetUID() && !obj.GetCreationTimestamp().Time.Before(pg.CreationTimestamp.Time)
}

// ownedBySource says whether an owner reference names a PodGroup of the source's API.
func ownedBySource(source gangsource.Source, ref metav1.OwnerReference) bool {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	gvk := source.GroupVersionKind()
	return err == nil && gv.Group == gvk.Group && ref.Kind == gvk.Kind
}

// deleteMirror deletes the mirror of a source PodGroup that is gone or being deleted. A garbage
// collector does the same through the owner reference; this does not wait for one.
func (c *Controller) deleteMirror(ctx context.Context, source gangsource.Source, mirror *schedulingv1beta1.PodGroup) error {
	if mirror == nil || mirror.Labels[schedulingv1beta1.GangSourceLabel] != string(source.Name()) {
		return nil
	}
	ref := metav1.GetControllerOfNoCopy(mirror)
	if ref == nil || !ownedBySource(source, *ref) {
		return nil
	}
	err := c.acct.Client.SchedulingV1beta1().PodGroups(mirror.Namespace).Delete(ctx, mirror.Name, preconditionUID(mirror.UID))
	return ignoreNotFound(err)
}

// recordOn records an event on a source's PodGroup, whose kind the event scheme does not know.
func (c *Controller) recordOn(source gangsource.Source, obj metav1.Object, eventType, reason, message string) {
	gvk := source.GroupVersionKind()
	c.recorder.Event(&v1.ObjectReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Namespace: obj.GetNamespace(),
		Name: obj.GetName(), UID: obj.GetUID(), ResourceVersion: obj.GetResourceVersion()}, eventType, reason, message)
}
