// Package visibility serves the live view of the queues, the aggregated API
// visibility.queue-scheduler.io/v1beta1, from what the scheduler holds in memory. Every replica
// serves it, leading or not; the API server's aggregation layer routes to it through the APIService
// v1beta1.visibility.queue-scheduler.io, and authentication and authorization are delegated to the
// API server, as for any aggregated API: a tenant allowed to list pendingworkloads in its namespace
// sees that namespace's work, and nothing of another's.
package visibility

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/apiserver/pkg/server/healthz"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/apiserver/pkg/util/compatibility"
	"k8s.io/klog/v2"

	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/openapi"
)

var (
	// scheme holds the live view's types and the meta types every API group serves.
	scheme = runtime.NewScheme()
	codecs = serializer.NewCodecFactory(scheme)
)

func init() {
	utilruntime.Must(visibilityv1beta1.AddToScheme(scheme))
	utilruntime.Must(scheme.SetVersionPriority(visibilityv1beta1.SchemeGroupVersion))
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	unversioned := schema.GroupVersion{Group: "", Version: "v1"}
	scheme.AddUnversionedTypes(unversioned, &metav1.Status{}, &metav1.APIVersions{}, &metav1.APIGroupList{},
		&metav1.APIGroup{}, &metav1.APIResourceList{})
}

// Source is what the view shows, read at each request. What it returns is the caller's: made for
// the call, and not changed after.
type Source interface {
	// QueueSummaries returns every queue, by name.
	QueueSummaries() []visibilityv1beta1.QueueSummary
	// QueueSummary returns the named queue; ok is false when it does not exist.
	QueueSummary(name string) (*visibilityv1beta1.QueueSummary, bool)
	// PendingInQueue returns the queue's pending work in order; ok is false when the queue does not
	// exist.
	PendingInQueue(queue string) (pending []visibilityv1beta1.PendingWorkload, ok bool)
	// PendingInNamespace returns a namespace's pending work (every namespace's for ""), each piece
	// with its position among all the work of its queue; then the pods that wait for a PodGroup
	// that does not exist (reason PodGroupMissing), which no queue holds yet: at position 0.
	PendingInNamespace(namespace string) []visibilityv1beta1.PendingWorkload
	// WhatIf answers a WhatIf about namespace, on the state at the call, for a user who may read
	// every queue (allQueues) or not; an error is an API status error (spec Invalid, naming the
	// field).
	WhatIf(ctx context.Context, namespace string, spec visibilityv1beta1.WhatIfSpec, allQueues bool) (*visibilityv1beta1.WhatIfStatus, error)
	// ForecastSnapshot is the scheduler's state now, as a forecast reads it, and the forecast made
	// from it, named CurrentSnapshot; an error is an API status error.
	ForecastSnapshot(ctx context.Context) (*visibilityv1beta1.ForecastSnapshot, error)
	// OnQueueChange registers f to be told the name of a queue whose summary may have changed (or
	// that was added or deleted), as it happens; f does not block.
	OnQueueChange(f func(queue string)) error
}

// Options configure the view's server.
type Options struct {
	// BindAddress is host:port to serve on.
	BindAddress string
	// Cert is the serving certificate; the APIService's caBundle must verify it for
	// <service>.<namespace>.svc.
	Cert dynamiccertificates.CertKeyContentProvider
	// Kubeconfig reaches the API server that authentication and authorization are delegated to;
	// the in-cluster configuration when empty.
	Kubeconfig string
	// Source is what is shown.
	Source Source
	// Synced says whether the caches the source reads have synced; until then requests are
	// answered 503 and /readyz fails.
	Synced func() bool
}

// Start serves the view until ctx ends. It returns once the server listens, or with the error
// that kept it from starting.
func Start(ctx context.Context, o Options) error {
	listener, err := net.Listen("tcp", o.BindAddress)
	if err != nil {
		return fmt.Errorf("live view: listen on %s: %w", o.BindAddress, err)
	}
	feed := newFeed(o.Source)
	if err := o.Source.OnQueueChange(feed.changed); err != nil {
		_ = listener.Close()
		return fmt.Errorf("live view: %w", err)
	}
	server, err := newServer(o, feed, listener)
	if err != nil {
		_ = listener.Close()
		return fmt.Errorf("live view: %w", err)
	}
	go feed.run(ctx, o.Synced)
	go func() {
		if err := server.PrepareRun().RunWithContext(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
			klog.FromContext(ctx).Error(err, "Live view server stopped")
		}
	}()
	return nil
}

func newServer(o Options, feed *feed, listener net.Listener) (*genericapiserver.GenericAPIServer, error) {
	cfg := genericapiserver.NewConfig(codecs)
	cfg.EffectiveVersion = compatibility.DefaultBuildEffectiveVersion()
	cfg.EnableProfiling = false
	cfg.EnableIndex = false
	secure := genericoptions.NewSecureServingOptions()
	secure.Listener = listener
	secure.ServerCert.GeneratedCert = o.Cert
	if err := secure.WithLoopback().ApplyTo(&cfg.SecureServing, &cfg.LoopbackClientConfig); err != nil {
		return nil, fmt.Errorf("secure serving: %w", err)
	}
	namer := openapinamer.NewDefinitionNamer(scheme)
	cfg.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(openapi.GetOpenAPIDefinitions, namer)
	cfg.OpenAPIConfig.Info.Title = "queue-scheduler live view"
	cfg.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(openapi.GetOpenAPIDefinitions, namer)
	cfg.OpenAPIV3Config.Info.Title = "queue-scheduler live view"
	authn := genericoptions.NewDelegatingAuthenticationOptions()
	authn.RemoteKubeConfigFile = o.Kubeconfig
	if err := authn.ApplyTo(&cfg.Authentication, cfg.SecureServing, cfg.OpenAPIConfig); err != nil {
		return nil, fmt.Errorf("delegated authentication: %w", err)
	}
	authz := genericoptions.NewDelegatingAuthorizationOptions()
	authz.RemoteKubeConfigFile = o.Kubeconfig
	if err := authz.ApplyTo(&cfg.Authorization); err != nil {
		return nil, fmt.Errorf("delegated authorization: %w", err)
	}
	synced := healthz.NamedCheck("scheduler-caches", func(*http.Request) error {
		if !o.Synced() {
			return errors.New("the scheduler's caches have not synced yet")
		}
		return nil
	})
	cfg.ReadyzChecks = append(cfg.ReadyzChecks, synced)
	server, err := cfg.Complete(nil).New("queue-scheduler-visibility", genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, err
	}
	group := genericapiserver.NewDefaultAPIGroupInfo(visibilityv1beta1.GroupName, scheme, runtime.NewParameterCodec(scheme), codecs)
	group.VersionedResourcesStorageMap[visibilityv1beta1.SchemeGroupVersion.Version] = storage(feed, o.Synced, cfg.Authorization.Authorizer)
	if err := server.InstallAPIGroup(&group); err != nil {
		return nil, fmt.Errorf("install %s: %w", visibilityv1beta1.GroupName, err)
	}
	return server, nil
}

// storage maps the view's resources to what serves them. Until the caches synced and the feed took
// every queue as it is, requests are answered 503.
func storage(feed *feed, synced func() bool, authz authorizer.Authorizer) map[string]rest.Storage {
	r := reader{source: feed.source, synced: func() bool { return synced() && feed.started.Load() }}
	return map[string]rest.Storage{
		visibilityv1beta1.QueueSummaries:                                            &queueSummaries{r, feed},
		visibilityv1beta1.QueueSummaries + "/" + visibilityv1beta1.PendingWorkloads: &pendingInQueue{r},
		visibilityv1beta1.PendingWorkloads:                                          &pendingWorkloads{r},
		visibilityv1beta1.WhatIfs:                                                   &whatIfs{r, authz},
		visibilityv1beta1.ForecastSnapshots:                                         &forecastSnapshots{r},
	}
}
