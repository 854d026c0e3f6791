package controller

import (
	"context"
	"fmt"
	"sync"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
)

// remapAfter is how long a kind that the API server did not serve is left alone before discovery
// is asked again (its CRD may have been installed since).
const remapAfter = 30 * time.Second

// accessReviewTimeout bounds the question whether queue-scheduler may watch a consumer's kind.
const accessReviewTimeout = 5 * time.Second

// consumerState is what the controller knows of a QueueUnit's consumer.
type consumerState int

const (
	// consumerUnknown: its kind is not watched (yet), or not served.
	consumerUnknown consumerState = iota
	// consumerMissing: its kind is watched and synced, and the consumer is not there, or is being
	// deleted.
	consumerMissing
	// consumerRunning: it exists and has not finished.
	consumerRunning
	// consumerFinished: it exists and a condition says it finished (Complete, Succeeded, Failed…).
	consumerFinished
)

// finishedConditions are the condition types with which job kinds say they are done: batch/v1 Job
// (Complete, Failed), Kubeflow jobs (Succeeded, Failed), JobSet (Completed, Failed).
var finishedConditions = map[string]bool{"Complete": true, "Completed": true, "Succeeded": true, "Failed": true}

// consumers watches the objects QueueUnits queue — Jobs, TFJobs, PyTorchJobs… — with one dynamic
// informer per kind, started the first time a unit names the kind.
type consumers struct {
	client   dynamic.Interface
	mapper   meta.ResettableRESTMapper
	factory  dynamicinformer.DynamicSharedInformerFactory
	onChange func(apiVersion, kind string, obj any)

	mu   sync.Mutex
	stop <-chan struct{}
	// watched is written under mu and watchedMu, and read under either: a forecast reads it under
	// watchedMu alone, never waiting for the discovery and access reviews mu covers.
	watched   map[schema.GroupKind]cache.SharedIndexInformer
	watchedMu sync.RWMutex
	unmapped  map[schema.GroupKind]time.Time // kinds not served or not permitted, and when that was learnt
	clock     clock.PassiveClock
	access    authorizationv1client.SelfSubjectAccessReviewInterface
}

// newConsumers returns the tracker; onChange hears of every change to a watched consumer, with the
// apiVersion and kind of the unit that started the watch (objects listed by a dynamic informer carry
// neither).
func newConsumers(client dynamic.Interface, disc discovery.DiscoveryInterface, access authorizationv1client.SelfSubjectAccessReviewInterface,
	onChange func(apiVersion, kind string, obj any), clk clock.PassiveClock) *consumers {
	return &consumers{
		clock:    clk,
		access:   access,
		client:   client,
		mapper:   restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc)),
		factory:  dynamicinformer.NewDynamicSharedInformerFactory(client, 0),
		onChange: onChange,
		watched:  map[schema.GroupKind]cache.SharedIndexInformer{},
		unmapped: map[schema.GroupKind]time.Time{},
	}
}

// start lets informers run until stop closes; informers asked for before start begin now.
func (c *consumers) start(stop <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stop = stop
	c.factory.Start(stop)
}

// errConsumerOutOfReach says the controller cannot reach a unit's consumer for a reason that retrying
// at once cannot change: its kind is not served, or queue-scheduler may not read or update it. The
// unit waits, saying why, and is tried again after remapAfter.
type errConsumerOutOfReach struct{ reason string }

func (e errConsumerOutOfReach) Error() string { return e.reason }

// outOfReach turns the errors that waiting cannot fix quickly into errConsumerOutOfReach.
func outOfReach(ref corev1.ObjectReference, err error) error {
	switch {
	case meta.IsNoMatchError(err):
		return errConsumerOutOfReach{fmt.Sprintf("kind %s of %s is not served by the API server (is its CRD installed?)", ref.Kind, ref.APIVersion)}
	case apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err):
		return errConsumerOutOfReach{fmt.Sprintf("queue-scheduler may not read or update %s of %s: grant it in the queue-scheduler ClusterRole (%v)", ref.Kind, ref.APIVersion, err)}
	}
	return err
}

// mapping finds the resource of a consumerRef's kind.
func (c *consumers) mapping(ref corev1.ObjectReference) (*meta.RESTMapping, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, errConsumerOutOfReach{fmt.Sprintf("consumerRef.apiVersion %q: %v", ref.APIVersion, err)}
	}
	gk := schema.GroupKind{Group: gv.Group, Kind: ref.Kind}
	m, err := c.mapper.RESTMapping(gk, gv.Version)
	if meta.IsNoMatchError(err) {
		c.mapper.Reset()
		m, err = c.mapper.RESTMapping(gk, gv.Version)
	}
	return m, outOfReach(ref, err)
}

// mayWatch asks the API server whether queue-scheduler may list and watch a resource, so that no
// informer is started that can only fail.
func (c *consumers) mayWatch(resource schema.GroupVersionResource) bool {
	if c.access == nil {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), accessReviewTimeout)
	defer cancel()
	for _, verb := range []string{"list", "watch"} {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: verb, Group: resource.Group, Resource: resource.Resource},
		}}
		got, err := c.access.Create(ctx, review, metav1.CreateOptions{})
		if err != nil || !got.Status.Allowed {
			return false
		}
	}
	return true
}

// informerFor returns the synced informer of ref's kind, starting it when the kind is new; nil while
// the kind is not served or the informer not synced yet.
func (c *consumers) informerFor(ref corev1.ObjectReference) cache.SharedIndexInformer {
	gv, _ := schema.ParseGroupVersion(ref.APIVersion)
	gk := schema.GroupKind{Group: gv.Group, Kind: ref.Kind}
	c.mu.Lock()
	defer c.mu.Unlock()
	if inf, ok := c.watched[gk]; ok {
		return synced(inf)
	}
	if asked, ok := c.unmapped[gk]; (ok && c.clock.Since(asked) < remapAfter) || c.stop == nil {
		return nil
	}
	m, err := c.mapping(ref)
	if err != nil || !c.mayWatch(m.Resource) {
		c.unmapped[gk] = c.clock.Now()
		return nil
	}
	delete(c.unmapped, gk)
	inf := c.factory.ForResource(m.Resource).Informer()
	changed := func(obj any) { c.onChange(ref.APIVersion, ref.Kind, obj) }
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    changed,
		UpdateFunc: func(_, obj any) { changed(obj) },
		DeleteFunc: func(obj any) { changed(unwrap(obj)) },
	}); err != nil {
		return nil
	}
	c.watchedMu.Lock()
	c.watched[gk] = inf
	c.watchedMu.Unlock()
	c.factory.Start(c.stop)
	return synced(inf)
}

func synced(inf cache.SharedIndexInformer) cache.SharedIndexInformer {
	if !inf.HasSynced() {
		return nil
	}
	return inf
}

// state says what is known of the consumer a unit in namespace refers to.
func (c *consumers) state(namespace string, ref corev1.ObjectReference) consumerState {
	_, st := c.get(namespace, ref)
	return st
}

// get returns the cached consumer a unit in namespace refers to, when it exists, and its state.
func (c *consumers) get(namespace string, ref corev1.ObjectReference) (*unstructured.Unstructured, consumerState) {
	return stateIn(c.informerFor(ref), namespace, ref)
}

// Cached is get for a reader that must not start a watch (a forecast): the consumer when its kind is
// watched already and it exists, else nil.
func (c *consumers) Cached(namespace string, ref corev1.ObjectReference) *unstructured.Unstructured {
	gv, _ := schema.ParseGroupVersion(ref.APIVersion)
	c.watchedMu.RLock()
	inf := c.watched[schema.GroupKind{Group: gv.Group, Kind: ref.Kind}]
	c.watchedMu.RUnlock()
	if inf == nil {
		return nil
	}
	u, _ := stateIn(synced(inf), namespace, ref)
	return u
}

// stateIn reads a consumer and its state from its kind's informer (nil when none is synced).
func stateIn(inf cache.SharedIndexInformer, namespace string, ref corev1.ObjectReference) (*unstructured.Unstructured, consumerState) {
	if inf == nil {
		return nil, consumerUnknown
	}
	obj, exists, err := inf.GetStore().GetByKey(namespace + "/" + ref.Name)
	if err != nil {
		return nil, consumerUnknown
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !exists || !ok || (ref.UID != "" && u.GetUID() != ref.UID) || u.GetDeletionTimestamp() != nil {
		return nil, consumerMissing
	}
	if finished(u) {
		return u, consumerFinished
	}
	return u, consumerRunning
}

// finished says whether an object's status carries a condition saying it is done.
func finished(u *unstructured.Unstructured) bool {
	conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conditions {
		cond, ok := c.(map[string]any)
		if ok && finishedConditions[fmt.Sprint(cond["type"])] && fmt.Sprint(cond["status"]) == string(corev1.ConditionTrue) {
			return true
		}
	}
	return false
}

// errNoConsumer says the consumer of a unit does not exist.
type errNoConsumer struct{ namespace, kind, name string }

func (e errNoConsumer) Error() string {
	return fmt.Sprintf("its consumer %s %s/%s does not exist", e.kind, e.namespace, e.name)
}

// goneFromServer confirms with the API server what the informer's cache says: that the consumer
// does not exist, is another object of the same name (another UID), or is being deleted. A consumer
// created a moment ago can be missing from the cache while it exists.
func (c *consumers) goneFromServer(ctx context.Context, namespace string, ref corev1.ObjectReference) (bool, error) {
	m, err := c.mapping(ref)
	if err != nil {
		return false, err
	}
	obj, err := c.client.Resource(m.Resource).Namespace(namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return true, nil
	case err != nil:
		return false, outOfReach(ref, err)
	}
	return (ref.UID != "" && obj.GetUID() != ref.UID) || obj.GetDeletionTimestamp() != nil, nil
}

// unsuspend turns the consumer's suspend switch off when it is on, so that the job creates its pods;
// a consumer without one is left alone. It reads the consumer from the API
// server, not the cache, and writes with the version read, so a concurrent change is never lost.
func (c *consumers) unsuspend(ctx context.Context, namespace string, ref corev1.ObjectReference) error {
	m, err := c.mapping(ref)
	if err != nil {
		return err
	}
	api := c.client.Resource(m.Resource).Namespace(namespace)
	obj, err := api.Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) {
			return errNoConsumer{namespace, ref.Kind, ref.Name}
		}
		return outOfReach(ref, err)
	}
	if ref.UID != "" && obj.GetUID() != ref.UID {
		return errNoConsumer{namespace, ref.Kind, ref.Name}
	}
	field := suspendField(obj)
	if field == nil {
		return nil
	}
	if err := unstructured.SetNestedField(obj.Object, false, field...); err != nil {
		return err
	}
	_, err = api.Update(ctx, obj, metav1.UpdateOptions{})
	return outOfReach(ref, err)
}

// suspendFields are where job kinds keep their suspend switch: spec.suspend (batch/v1 Job, JobSet,
// RayJob) and spec.runPolicy.suspend (Kubeflow training jobs, MPIJob).
var suspendFields = [][]string{{"spec", "suspend"}, {"spec", "runPolicy", "suspend"}}

// suspendField returns the path of obj's suspend switch when it is on, else nil.
func suspendField(obj *unstructured.Unstructured) []string {
	for _, field := range suspendFields {
		if on, found, _ := unstructured.NestedBool(obj.Object, field...); found && on {
			return field
		}
	}
	return nil
}
