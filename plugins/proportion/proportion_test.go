package proportion

import (
	"testing"

	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

func TestIsSchedulableAfterPodDelete(t *testing.T) {
	bound := util.MakePod("ns", "bound").Node("n").Obj()
	tests := []struct {
		name    string
		deleted any
		want    fwk.QueueingHint
	}{
		{name: "a bound pod frees what it held", deleted: bound, want: fwk.Queue},
		{name: "an unbound pod held nothing", deleted: util.MakePod("ns", "pending").Obj(), want: fwk.QueueSkip},
		{name: "unknown object", deleted: "garbage", want: fwk.Queue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logger, _ := ktesting.NewTestContext(t)
			got, err := isSchedulableAfterPodDelete(logger, util.MakePod("ns", "p").Obj(), tt.deleted, nil)
			if err != nil || got != tt.want {
				t.Errorf("hint: got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestIsSchedulableAfterQueueSpecChange(t *testing.T) {
	withGeneration := func(g int64) *schedulingv1beta1.Queue {
		q := util.MakeQueue("q").Obj()
		q.Generation = g
		return q
	}
	tests := []struct {
		name     string
		old, new any
		want     fwk.QueueingHint
	}{
		{name: "spec changed", old: withGeneration(1), new: withGeneration(2), want: fwk.Queue},
		{name: "status only", old: withGeneration(2), new: withGeneration(2), want: fwk.QueueSkip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logger, _ := ktesting.NewTestContext(t)
			got, err := isSchedulableAfterQueueSpecChange(logger, util.MakePod("ns", "p").Obj(), tt.old, tt.new)
			if err != nil || got != tt.want {
				t.Errorf("hint: got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}
