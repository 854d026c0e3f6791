package gangsource

import (
	"fmt"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

// recheckEvery is how often discovery is asked again about the sources not served yet; a
// CustomResourceDefinition's change asks at once.
const recheckEvery = time.Minute

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// Sources watches the PodGroups of the sources taken, each once its API is served.
type Sources struct {
	taken    []Source
	disc     discovery.DiscoveryInterface
	crds     cache.SharedIndexInformer
	onChange func(Source, metav1.Object)
	recheck  chan struct{}
	// clock paces the rechecks of the built-in API.
	clock clock.WithTicker

	mu      sync.RWMutex
	watched map[schedulingv1beta1.GangSource]cache.SharedIndexInformer
}

// NewSources watches the sources taken; onChange hears of every change to one of their PodGroups.
// CustomResourceDefinitions are watched by their metadata only; the built-in API is asked again
// every recheckEvery on clk.
func NewSources(taken []Source, disc discovery.DiscoveryInterface, meta metadata.Interface, onChange func(Source, metav1.Object),
	clk clock.WithTicker) *Sources {
	s := &Sources{taken: taken, disc: disc, onChange: onChange, recheck: make(chan struct{}, 1), clock: clk,
		watched: map[schedulingv1beta1.GangSource]cache.SharedIndexInformer{}}
	if len(taken) > 0 {
		s.crds = metadatainformer.NewFilteredMetadataInformer(meta, crdResource, "", 0, cache.Indexers{}, nil).Informer()
		_, _ = s.crds.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { s.askAgain() },
			UpdateFunc: func(any, any) { s.askAgain() },
		})
	}
	return s
}

// Start watches until stop closes: the CRDs, and each source from when it is served.
func (s *Sources) Start(stop <-chan struct{}) {
	if s == nil || len(s.taken) == 0 {
		return
	}
	go s.crds.Run(stop)
	go func() {
		tick := s.clock.NewTicker(recheckEvery)
		defer tick.Stop()
		for {
			s.watchServed(stop)
			select {
			case <-stop:
				return
			case <-tick.C():
			case <-s.recheck:
			}
		}
	}()
}

func (s *Sources) askAgain() {
	select {
	case s.recheck <- struct{}{}:
	default:
	}
}

// watchServed starts the informer of every source taken that is served and not watched yet.
func (s *Sources) watchServed(stop <-chan struct{}) {
	for _, source := range s.taken {
		if s.informer(source.Name()) != nil {
			continue
		}
		served, err := s.served(source)
		if err != nil {
			klog.Background().V(2).Info("Asking whether a gang source is served", "source", source.Name(), "err", err)
			continue
		}
		if served {
			s.watch(source, stop)
		}
	}
}

// served asks discovery whether the API server serves the source's PodGroups.
func (s *Sources) served(source Source) (bool, error) {
	gv := source.GroupVersionKind().GroupVersion().String()
	resources, err := s.disc.ServerResourcesForGroupVersion(gv)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("discovery of %s: %w", gv, err)
	}
	return slices.ContainsFunc(resources.APIResources, func(r metav1.APIResource) bool { return r.Name == resource }), nil
}

func (s *Sources) watch(source Source, stop <-chan struct{}) {
	inf := source.newInformer()
	changed := func(obj any) {
		if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tombstone.Obj
		}
		if o, ok := obj.(metav1.Object); ok {
			s.onChange(source, o)
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    changed,
		UpdateFunc: func(_, obj any) { changed(obj) },
		DeleteFunc: changed,
	})
	s.mu.Lock()
	s.watched[source.Name()] = inf
	s.mu.Unlock()
	go inf.Run(stop)
	klog.Background().Info("Watching gang source", "source", source.Name(), "kind", source.GroupVersionKind())
}

func (s *Sources) informer(name schedulingv1beta1.GangSource) cache.SharedIndexInformer {
	if s == nil {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.watched[name]
}

// Source returns the source taken by that name, or nil.
func (s *Sources) Source(name schedulingv1beta1.GangSource) Source {
	if s == nil {
		return nil
	}
	for _, source := range s.taken {
		if source.Name() == name {
			return source
		}
	}
	return nil
}

// Get returns a source's PodGroup from its cache. known is false while the source is not watched
// or not synced: its PodGroups are not known yet.
func (s *Sources) Get(name schedulingv1beta1.GangSource, key string) (obj metav1.Object, known bool) {
	inf := s.informer(name)
	if inf == nil || !inf.HasSynced() {
		return nil, false
	}
	item, exists, err := inf.GetStore().GetByKey(key)
	if err != nil || !exists {
		return nil, err == nil
	}
	o, ok := item.(metav1.Object)
	return o, ok
}

// Watched says whether the source's PodGroups are watched, synced or not.
func (s *Sources) Watched(name schedulingv1beta1.GangSource) bool { return s.informer(name) != nil }

// Keys lists the "namespace/name" keys of every watched source's PodGroups.
func (s *Sources) Keys() map[schedulingv1beta1.GangSource][]string {
	out := map[schedulingv1beta1.GangSource][]string{}
	if s == nil {
		return out
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for name, inf := range s.watched {
		out[name] = inf.GetStore().ListKeys()
	}
	return out
}
