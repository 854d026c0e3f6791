package kubectlqueue

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/textout"
)

func TestDescribeUsage(t *testing.T) {
	at := time.Date(2026, 11, 26, 9, 30, 0, 0, time.UTC)
	for _, tt := range []struct {
		name  string
		usage *schedulingv1beta1.UsageCheckpoint
		want  string
	}{
		{"no history", nil, "Usage (decayed):\t<none>\n"},
		{"usage at its own weight", &schedulingv1beta1.UsageCheckpoint{
			ResourceSeconds: v1.ResourceList{v1.ResourceCPU: resource.MustParse("7200")}, Time: metav1.NewTime(at)},
			"Usage (decayed):\tcpu 2.0 core-h, at 2026-11-26T09:30:00Z\nEffective weight:\tits weight\n"},
		{"usage of cpu and memory, as the status holds it", &schedulingv1beta1.UsageCheckpoint{
			ResourceSeconds: v1.ResourceList{v1.ResourceCPU: resource.MustParse("992540"), v1.ResourceMemory: resource.MustParse("1065731262034242m")},
			Time:            metav1.NewTime(at)},
			"Usage (decayed):\tcpu 275.7 core-h, memory 282.3 MiB-h, at 2026-11-26T09:30:00Z\nEffective weight:\tits weight\n"},
		{"usage moving the weight", &schedulingv1beta1.UsageCheckpoint{
			ResourceSeconds: v1.ResourceList{v1.ResourceCPU: resource.MustParse("7200")},
			EffectiveWeight: v1.ResourceList{v1.ResourceCPU: resource.MustParse("750m"), "nvidia.com/gpu": resource.MustParse("1250m")},
			Time:            metav1.NewTime(at)},
			"Usage (decayed):\tcpu 2.0 core-h, at 2026-11-26T09:30:00Z\nEffective weight:\tcpu 0.75, nvidia.com/gpu 1.25 (its weight elsewhere)\n"},
	} {
		var buf bytes.Buffer
		q := &schedulingv1beta1.Queue{Status: schedulingv1beta1.QueueStatus{Usage: tt.usage}}
		describeUsage(&textout.Lines{W: &buf}, q)
		if diff := cmp.Diff(tt.want, buf.String()); diff != "" {
			t.Errorf("%s (-want,+got):\n%s", tt.name, diff)
		}
	}
}
