package backfill

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// The refused pods a reservation change would move back to the queue keep only those that still
// wait: a pod deleted, replaced under the same name, or bound since is forgotten.
func TestRefusedPodsForgetThoseGone(t *testing.T) {
	waiting, deleted, replaced, bound := cpuPod("waiting", "1", 0, now), cpuPod("deleted", "1", 0, now), cpuPod("replaced", "1", 0, now), cpuPod("bound", "1", 0, now)
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	again := replaced.DeepCopy()
	again.UID = types.UID("new")
	placed := bound.DeepCopy()
	placed.Spec.NodeName = "a"
	for _, p := range []*v1.Pod{waiting, again, placed} {
		if err := indexer.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	r := refusedPods{pods: map[string]*v1.Pod{}}
	for _, p := range []*v1.Pod{waiting, deleted, replaced, bound} {
		r.add(p)
	}
	r.forgetGone(corelisters.NewPodLister(indexer))
	if len(r.pods) != 1 || r.pods["ns/waiting"] == nil {
		t.Errorf("refused pods kept %v, want only ns/waiting", r.pods)
	}
}
