package webhook

import (
	"context"
	"testing"

	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned/fake"
	"github.com/queue-scheduler/queue-scheduler/pkg/webhook/validation"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// TestDeletedChildDoesNotBlockItsParent: a child deleted a moment before its parent may still be in
// the cache; the parent's deletion is refused only for children the API server still holds.
func TestDeletedChildDoesNotBlockItsParent(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	parent := util.MakeQueue("parent").StatusState("Closed").Obj()
	child := util.MakeQueue("child").Parent("parent").Obj()
	kube := informers.NewSharedInformerFactory(kubefake.NewClientset(), 0)
	acct, err := accounting.Start(ctx, fake.NewSimpleClientset(parent, child), kube)
	if err != nil {
		t.Fatal(err)
	}
	kube.Start(ctx.Done())
	kube.WaitForCacheSync(ctx.Done())
	if got := validation.ValidateQueueDeletion(parent, view{acct}); len(got) != 1 {
		t.Fatalf("deleting a parent whose child exists: got %v, want one refusal", got)
	}

	// The API server no longer holds the child; the cache still does.
	acct.Client = fake.NewSimpleClientset(parent)
	if got := validation.ValidateQueueDeletion(parent, view{acct}); len(got) != 0 {
		t.Errorf("deleting a parent whose child is gone from the API server: got %v, want no refusal", got)
	}
	if got := len(acct.Children("parent")); got != 1 {
		t.Fatalf("the cache holds %d children of parent, want the stale one", got)
	}
}
