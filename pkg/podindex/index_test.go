package podindex

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
)

func pod(name string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
}

func TestIndex(t *testing.T) {
	x := New()
	x.Add(pod("a"), "q1")
	x.Add(pod("b"), "q1")
	x.Add(pod("a"), "q2") // a now waits for q2 only
	if diff := cmp.Diff([]types.NamespacedName{{Namespace: "ns", Name: "b"}}, x.Names("q1")); diff != "" {
		t.Errorf("q1 (-want,+got):\n%s", diff)
	}
	if got := x.Pods("q2"); len(got) != 1 || got["ns/a"] == nil {
		t.Errorf("q2: got %v, want ns/a", got)
	}
	x.Remove(pod("b"))
	x.Remove(pod("never-added"))
	if got := x.Names("q1"); len(got) != 0 {
		t.Errorf("q1 after removing b: got %v", got)
	}
	if len(x.byKey) != 1 || len(x.byPod) != 1 {
		t.Errorf("empty keys kept: %v", x.byKey)
	}
}

// A pod leaves the index once the informer shows it bound or deleted.
func TestForgetOnBindOrDelete(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	bound, deleted := pod("bound"), pod("deleted")
	client := fake.NewClientset(bound, deleted)
	factory := informers.NewSharedInformerFactory(client, 0)
	x := New()
	if err := x.ForgetOnBindOrDelete(factory.Core().V1().Pods().Informer()); err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	// The fake clientset drops events sent before the informer's watch is registered: probe pods,
	// one per try, until the informer sees one, show the watch is live.
	tries := 0
	err := wait.PollUntilContextTimeout(ctx, time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		tries++
		if _, err := client.CoreV1().Pods("ns").Create(ctx, pod(fmt.Sprint("probe-", tries)), metav1.CreateOptions{}); err != nil {
			return false, err
		}
		pods, err := factory.Core().V1().Pods().Lister().List(labels.Everything())
		return err == nil && len(pods) > 2, nil
	})
	if err != nil {
		t.Fatal("the informer never saw a probe pod")
	}
	x.Add(bound, "q")
	x.Add(deleted, "q")
	onNode := bound.DeepCopy()
	onNode.Spec.NodeName = "n"
	if _, err := client.CoreV1().Pods("ns").Update(ctx, onNode, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := client.CoreV1().Pods("ns").Delete(ctx, "deleted", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return len(x.Pods("q")) == 0, nil
	})
	if err != nil {
		t.Fatalf("still indexed: %v", x.Pods("q"))
	}
}
