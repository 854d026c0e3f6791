package queuesim

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/controller-manager/pkg/informerfactory"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/controller/garbagecollector"
	"k8s.io/kubernetes/pkg/controller/namespace"
)

const (
	// gcSyncPeriod is how often the garbage collector reads discovery again, to watch the resources
	// that appeared since (a CRD installed later), and how long its workers wait for its first sync:
	// kube-controller-manager's.
	gcSyncPeriod = 30 * time.Second
	// namespaceResync is how often the namespace controller looks again at every namespace:
	// kube-controller-manager's default --namespace-sync-period.
	namespaceResync = 5 * time.Minute
	// A small cluster on two cores: fewer workers than kube-controller-manager's 20 and 10.
	gcWorkers        = 5
	namespaceWorkers = 2
)

// controllers are the parts of kube-controller-manager besides the Job controller that make deletion
// behave as on a cluster: the garbage collector deletes what an owner deleted leaves behind (a
// Job's pods and QueueUnit) and finishes a foreground deletion; the namespace controller empties a
// namespace being deleted and then removes it.
type controllers struct {
	gc *garbagecollector.GarbageCollector
	// gcDiscovery reads discovery for the garbage collector's periodic sync uncached: mapper's cache
	// is the one that sync resets (upstream's advice: never pass it the mapper's cached client).
	gcDiscovery discovery.DiscoveryInterface
	mapper      *restmapper.DeferredDiscoveryRESTMapper
	namespaces  *namespace.NamespaceController
	// informersStarted is closed once the shared informers have started: the garbage collector
	// starts its monitors only then, as in kube-controller-manager.
	informersStarted chan struct{}
}

// newControllers builds the garbage collector and the namespace controller on kube, the informers
// runNodes shares with the kubelet stand-in and the Job controller; resources kube has no typed
// informer for (the CRDs) are watched through metadata informers. Call it before kube starts, and
// run once it has.
func newControllers(ctx context.Context, config *rest.Config, kube informers.SharedInformerFactory) (*controllers, error) {
	c := &controllers{informersStarted: make(chan struct{})}
	if err := c.newGarbageCollector(ctx, config, kube); err != nil {
		return nil, fmt.Errorf("start the garbage collector: %w", err)
	}
	if err := c.newNamespaceController(ctx, config, kube); err != nil {
		return nil, fmt.Errorf("start the namespace controller: %w", err)
	}
	return c, nil
}

func (c *controllers) newGarbageCollector(ctx context.Context, config *rest.Config, kube informers.SharedInformerFactory) error {
	kubeClient, metadataClient, err := controllerClients(config, "generic-garbage-collector")
	if err != nil {
		return err
	}
	c.gcDiscovery = kubeClient.Discovery()
	c.mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(kubeClient.Discovery()))
	metadataInformers := metadatainformer.NewSharedInformerFactory(metadataClient, 0)
	c.gc, err = garbagecollector.NewGarbageCollector(ctx, kubeClient, metadataClient, c.mapper,
		garbagecollector.DefaultIgnoredResources(), informerfactory.NewInformerFactory(kube, metadataInformers),
		c.informersStarted)
	return err
}

func (c *controllers) newNamespaceController(ctx context.Context, config *rest.Config, kube informers.SharedInformerFactory) error {
	kubeClient, metadataClient, err := controllerClients(config, "namespace-controller")
	if err != nil {
		return err
	}
	c.namespaces = namespace.NewNamespaceController(ctx, kubeClient, metadataClient,
		kubeClient.Discovery().ServerPreferredNamespacedResources, kube.Core().V1().Namespaces(), namespaceResync,
		v1.FinalizerKubernetes)
	return nil
}

// controllerClients are a controller's clients, named by its user agent as in
// kube-controller-manager.
func controllerClients(config *rest.Config, name string) (kubernetes.Interface, metadata.Interface, error) {
	config = rest.CopyConfig(config)
	rest.AddUserAgent(config, name)
	kubeClient, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, nil, fmt.Errorf("create its client: %w", err)
	}
	metadataClient, err := metadata.NewForConfig(config)
	if err != nil {
		return nil, nil, fmt.Errorf("create its metadata client: %w", err)
	}
	return kubeClient, metadataClient, nil
}

// run starts the controllers until ctx ends; the shared informers have started. Like
// kube-controller-manager, it resets the REST mapper periodically and runs the garbage collector's
// discovery sync beside it, which starts its monitors at once and then every gcSyncPeriod.
func (c *controllers) run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	close(c.informersStarted)
	gcCtx := klog.NewContext(ctx, klog.LoggerWithName(logger, "garbage-collector"))
	go wait.UntilWithContext(gcCtx, func(context.Context) { c.mapper.Reset() }, gcSyncPeriod)
	go c.gc.Run(gcCtx, gcWorkers, gcSyncPeriod)
	go c.gc.Sync(gcCtx, c.gcDiscovery, gcSyncPeriod)
	go c.namespaces.Run(klog.NewContext(ctx, klog.LoggerWithName(logger, "namespace-controller")), namespaceWorkers)
}
