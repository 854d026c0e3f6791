package accounting

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned/fake"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// A pod that ends is told of once: as it turns terminal, and not again as it is deleted; a pod the
// informer never saw running (one that an informer of live pods lets go as it ends) as it leaves.
func TestPodFinishedIsToldOnce(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kube := kubefake.NewClientset(pod("q", "runs", "1", "n"))
	factory := informers.NewSharedInformerFactory(kube, 0)
	a, err := Start(ctx, fake.NewSimpleClientset(util.MakeQueue("root").Obj(), util.MakeQueue("q").Obj()), factory, Config{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var told []string
	if err := a.Pods.OnPodFinished(func(p *v1.Pod) { mu.Lock(); told = append(told, p.Name); mu.Unlock() }); err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	toldOf := func(want ...string) {
		t.Helper()
		err := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
			mu.Lock()
			defer mu.Unlock()
			return slices.Equal(told, want), nil
		})
		if err != nil {
			mu.Lock()
			t.Fatalf("told of %v, want %v", told, want)
		}
	}
	pods := kube.CoreV1().Pods("ns")
	runs, _ := pods.Get(ctx, "runs", metav1.GetOptions{})
	runs.Status.Phase = v1.PodSucceeded
	if _, err := pods.UpdateStatus(ctx, runs, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	toldOf("runs")
	ended := pod("q", "ended", "1", "n")
	ended.Status.Phase = v1.PodFailed
	if _, err := pods.Create(ctx, ended, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"runs", "ended"} {
		if err := pods.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	toldOf("runs", "ended")
}
