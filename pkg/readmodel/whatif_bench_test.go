package readmodel

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned/fake"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// BenchmarkWhatIf answers a what-if (a queue's weight tripled, and a gang of 8 pods, or 10,000 pods,
// the most one may ask, of 1 CPU each) on 5,000 nodes
// of 32 CPUs running 10,000 pods of 100 queues, started over the last hour (so that they end, at
// the default runtimes, over the next one at the median and the next four at the 90th percentile),
// with 2,000 pods pending in 20 namespaces: the snapshot read from the caches, the shares computed
// twice and the forecast played twice.
func BenchmarkWhatIf(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var kubeObjects, queueObjects []runtime.Object
	for q := range 100 {
		queueObjects = append(queueObjects, util.MakeQueue(fmt.Sprintf("q%02d", q)).Obj())
	}
	now := time.Now()
	for i := range 5000 {
		node := fmt.Sprintf("node-%04d", i)
		kubeObjects = append(kubeObjects, util.MakeNode(node, "32", "128Gi"))
		for p := range 2 {
			pod := util.MakePod(fmt.Sprintf("ns-%d", p), fmt.Sprintf("run-%d-%d", i, p)).UID(fmt.Sprintf("run-%d-%d", i, p)).
				Label(schedulingv1beta1.QueueLabel, fmt.Sprintf("q%02d", (i*2+p)%100)).Req(map[v1.ResourceName]string{v1.ResourceCPU: "16"}).Obj()
			pod.Spec.NodeName = node
			started := now.Add(-time.Duration((i*2+p)%3600) * time.Second)
			pod.Status.Phase, pod.Status.StartTime = v1.PodRunning, ptr.To(metav1.NewTime(started))
			kubeObjects = append(kubeObjects, pod)
		}
	}
	for i := range 2000 {
		pod := util.MakePod(fmt.Sprintf("ns-%d", i%20), fmt.Sprintf("wait-%d", i)).UID(fmt.Sprintf("wait-%d", i)).
			Label(schedulingv1beta1.QueueLabel, fmt.Sprintf("q%02d", i%100)).Req(map[v1.ResourceName]string{v1.ResourceCPU: fmt.Sprint(1 + i%8)}).Obj()
		kubeObjects = append(kubeObjects, pod)
	}
	acct := startAccounting(b, ctx, fake.NewSimpleClientset(queueObjects...), kubefake.NewClientset(kubeObjects...))
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return acct.Synced() && len(acct.Deserved("q00")) > 0, nil
	}); err != nil {
		b.Fatal("the accounting never synced")
	}
	c := &Model{acct: acct}
	template := func(cpu string) v1.PodTemplateSpec {
		return v1.PodTemplateSpec{Spec: util.MakePod("", "").Req(map[v1.ResourceName]string{v1.ResourceCPU: cpu}).Obj().Spec}
	}
	for _, bc := range []struct {
		name string
		work visibilityv1beta1.NewWorkload
	}{
		{"gang of 8", visibilityv1beta1.NewWorkload{Name: "train", Queue: "q00", Pods: 8, Gang: true, Template: template("8")}},
		{"10000 pods", visibilityv1beta1.NewWorkload{Name: "sweep", Queue: "q00", Pods: maxWhatIfPods, Template: template("1")}},
	} {
		spec := visibilityv1beta1.WhatIfSpec{Queues: []visibilityv1beta1.QueueChange{{Name: "q00", Weight: ptr.To[int32](3)}},
			Workloads: []visibilityv1beta1.NewWorkload{bc.work}}
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				status, err := c.WhatIf(context.Background(), "ns-0", spec, false)
				if err != nil || len(status.Workloads) != 101 {
					b.Fatalf("answer %v, %d workloads; want the 100 pods of ns-0 and the new work", err, len(status.Workloads))
				}
			}
		})
	}
}
