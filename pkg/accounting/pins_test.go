package accounting

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned/fake"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// A PodGroup without spec.queue stays in the queue its namespace named when it was first seen, in
// the indexes too, when the namespace's annotation changes and the group is updated; a group created
// afterwards goes to the new queue.
func TestPodGroupQueuePinned(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", Annotations: map[string]string{schedulingv1beta1.QueueAnnotation: "a"}}}
	kubeClient := kubefake.NewClientset(ns)
	kube := informers.NewSharedInformerFactory(kubeClient, 0)
	a, err := Start(ctx, fake.NewSimpleClientset(util.MakeQueue("a").Obj(), util.MakeQueue("b").Obj()), kube, Config{})
	if err != nil {
		t.Fatal(err)
	}
	kube.Start(ctx.Done())
	kube.WaitForCacheSync(ctx.Done())
	groups := a.Store.PodGroupInformer().GetIndexer()
	early := util.MakePodGroup("ns", "early").Obj()
	early.UID = "early"
	if err := groups.Add(early); err != nil {
		t.Fatal(err)
	}
	ns.Annotations[schedulingv1beta1.QueueAnnotation] = "b"
	if _, err := kubeClient.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return a.Store.namespaceAnnotation("ns") == "b", nil
	}); err != nil {
		t.Fatal("the namespace cache never saw the new annotation")
	}
	updated := early.DeepCopy()
	updated.Labels = map[string]string{"touched": "yes"}
	if err := groups.Update(updated); err != nil {
		t.Fatal(err)
	}
	late := util.MakePodGroup("ns", "late").Obj()
	late.UID = "late"
	if err := groups.Add(late); err != nil {
		t.Fatal(err)
	}
	names := func(queue string) []string {
		var out []string
		for _, pg := range a.Store.PodGroupsOf(queue) {
			out = append(out, pg.Name)
		}
		return out
	}
	if got := names("a"); len(got) != 1 || got[0] != "early" {
		t.Errorf("groups of a: %v, want [early]", got)
	}
	if got := names("b"); len(got) != 1 || got[0] != "late" {
		t.Errorf("groups of b: %v, want [late]", got)
	}
	if got := a.Store.QueueOfPodGroup(updated); got != "a" {
		t.Errorf("queue of early: %q, want a", got)
	}
}
