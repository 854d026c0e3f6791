package v1beta1

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// A pod's gang: queue-scheduler's label first; else the first PodGroup it names of a gang API that is
// taken; none for a pod of no gang or of APIs that are not taken.
func TestGangOf(t *testing.T) {
	takesVolcano := func(s GangSource) bool { return s == GangSourceVolcano || s == GangSourceKubernetes }
	pod := func(labels, annotations map[string]string, native string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: annotations}}
		if native != "" {
			p.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: ptr.To(native)}
		}
		return p
	}
	for _, tt := range []struct {
		name   string
		pod    *corev1.Pod
		want   string
		wantOK bool
	}{
		{"our label", pod(map[string]string{PodGroupLabel: "ours", SchedulerPluginsPodGroupLabel: "sp"}, nil, ""), "ours", true},
		{"a source not taken", pod(map[string]string{SchedulerPluginsPodGroupLabel: "sp"}, nil, ""), "", false},
		{"a taken source after one not taken", pod(map[string]string{SchedulerPluginsPodGroupLabel: "sp"},
			map[string]string{VolcanoGroupNameAnnotation: "vc"}, ""), "vc", true},
		{"the native PodGroup", pod(nil, nil, "native"), "native", true},
		{"no gang", pod(nil, nil, ""), "", false},
	} {
		got, ok := GangOf(tt.pod, takesVolcano)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("%s: GangOf = %q, %t; want %q, %t", tt.name, got, ok, tt.want, tt.wantOK)
		}
	}
}
