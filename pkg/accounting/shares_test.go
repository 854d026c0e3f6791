package accounting

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The spare grows when a queue holds more above its share than before, in any resource, or a queue
// comes above its share; it does not when queues hold the same or less above it.
func TestSpareGrew(t *testing.T) {
	cpu := func(q string) v1.ResourceList { return v1.ResourceList{v1.ResourceCPU: resource.MustParse(q)} }
	before := map[string]v1.ResourceList{"a": cpu("2")}
	tests := []struct {
		name string
		now  map[string]v1.ResourceList
		want bool
	}{
		{"the same", map[string]v1.ResourceList{"a": cpu("2")}, false},
		{"less", map[string]v1.ResourceList{"a": cpu("1")}, false},
		{"none", map[string]v1.ResourceList{}, false},
		{"more", map[string]v1.ResourceList{"a": cpu("3")}, true},
		{"another queue above its share", map[string]v1.ResourceList{"a": cpu("2"), "b": cpu("1")}, true},
		{"another resource", map[string]v1.ResourceList{"a": {v1.ResourceCPU: resource.MustParse("2"), v1.ResourceMemory: resource.MustParse("1Gi")}}, true},
	}
	for _, tt := range tests {
		if got := spareGrew(before, tt.now); got != tt.want {
			t.Errorf("%s: spareGrew = %t, want %t", tt.name, got, tt.want)
		}
	}
}
