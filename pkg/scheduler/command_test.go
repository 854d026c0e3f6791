package scheduler

import (
	"testing"

	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
)

// Without an allow-list the metrics options are told so, instead of looking for a manifest no flag
// named; an allow-list given by either flag is left to the metrics options.
func TestWithoutMetricsAllowList(t *testing.T) {
	plain := options.NewOptions()
	WithoutMetricsAllowList(plain)
	if plain.Metrics.AllowListMapping == nil || len(plain.Metrics.AllowListMapping) != 0 {
		t.Errorf("no allow-list given: mapping %v, want an empty one", plain.Metrics.AllowListMapping)
	}
	manifest := options.NewOptions()
	manifest.Metrics.AllowListMappingManifest = "/etc/allow.yaml"
	WithoutMetricsAllowList(manifest)
	if manifest.Metrics.AllowListMapping != nil {
		t.Errorf("a manifest given: mapping %v, want none, so that the manifest is read", manifest.Metrics.AllowListMapping)
	}
	mapping := options.NewOptions()
	mapping.Metrics.AllowListMapping = map[string]string{"m,l": "a"}
	WithoutMetricsAllowList(mapping)
	if len(mapping.Metrics.AllowListMapping) != 1 {
		t.Errorf("a mapping given: %v, want it kept", mapping.Metrics.AllowListMapping)
	}
}
