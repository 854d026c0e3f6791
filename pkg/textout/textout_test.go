package textout

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// failAfter accepts n writes, then fails.
type failAfter struct {
	n   int
	got strings.Builder
}

func (f *failAfter) Write(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errors.New("disk full")
	}
	f.n--
	return f.got.Write(p)
}

func TestLinesKeepTheFirstError(t *testing.T) {
	w := &failAfter{n: 1}
	l := &Lines{W: w}
	l.Printf("a=%d\n", 1)
	l.Printf("b=%d\n", 2)
	w.n = 5 // the writer recovers, but what follows an error is not written
	l.Printf("c=%d\n", 3)
	if l.Err == nil || l.Err.Error() != "disk full" || w.got.String() != "a=1\n" {
		t.Errorf("err %v, written %q; want the first error and only the line before it", l.Err, w.got.String())
	}
}

// Usage in resource-seconds is printed in hours of units a reader knows: cores, the binary unit
// of bytes that leaves at least one, and an extended resource's own unit.
func TestResourceHours(t *testing.T) {
	for _, tt := range []struct {
		name string
		list v1.ResourceList
		want string
	}{
		{name: "none", want: "<none>"},
		{name: "a queue's usage as its status holds it", list: v1.ResourceList{
			v1.ResourceCPU: resource.MustParse("992540m"), v1.ResourceMemory: resource.MustParse("1065731262034242m")},
			want: "cpu 0.276 core-h, memory 282.3 MiB-h"},
		{name: "days of a large queue", list: v1.ResourceList{
			v1.ResourceCPU: resource.MustParse("992540"), v1.ResourceMemory: resource.MustParse("1065731262034242")},
			want: "cpu 275.7 core-h, memory 275.7 GiB-h"},
		{name: "two core-hours", list: v1.ResourceList{v1.ResourceCPU: resource.MustParse("7200")}, want: "cpu 2.0 core-h"},
		{name: "extended resources, storage and hugepages", list: v1.ResourceList{
			"nvidia.com/gpu": resource.MustParse("43200"), v1.ResourceEphemeralStorage: resource.MustParse("3600Ki"),
			"hugepages-2Mi": resource.MustParse("7200Gi"), v1.ResourcePods: resource.MustParse("1")},
			want: "ephemeral-storage 1.0 KiB-h, hugepages-2Mi 2.0 GiB-h, nvidia.com/gpu 12.0 gpu-h, pods <0.001 pods-h"},
		{name: "nothing held", list: v1.ResourceList{v1.ResourceCPU: resource.MustParse("0")}, want: "cpu 0 core-h"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, ResourceHours(tt.list)); diff != "" {
				t.Errorf("ResourceHours(%v) (-want,+got):\n%s", tt.list, diff)
			}
		})
	}
}
