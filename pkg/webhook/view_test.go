package webhook

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/queue-scheduler/queue-scheduler/pkg/accounting/accountingtest"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned/fake"
	"github.com/queue-scheduler/queue-scheduler/pkg/rules"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// TestRefusalsRestOnTheAPIServer: a child deleted a moment before its parent may still be in the
// cache, and a namespace created a moment before its first pod may not be in it yet; a refusal rests
// on what the API server holds, never on the cache alone.
func TestRefusalsRestOnTheAPIServer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	parent := util.MakeQueue("parent").StatusState("Closed").Obj()
	child := util.MakeQueue("child").Parent("parent").Obj()
	team := util.MakeQueue("team").Namespaces(map[string]string{"team": "a"}).Obj()
	kube := kubefake.NewClientset()
	acct, _ := accountingtest.Start(ctx, t, kube, parent, child, team)
	s := &Server{acct: acct, kube: kube}
	deletion := func(v rules.View) field.ErrorList { return rules.ValidateQueueDeletion(parent, v) }
	if got, err := s.judge(ctx, deletion); err != nil || len(got) != 1 {
		t.Fatalf("deleting a parent whose child exists: got %v, %v, want one refusal", got, err)
	}

	// The API server no longer holds the child; the cache still does.
	acct.Client = fake.NewSimpleClientset(parent, team)
	if got, err := s.judge(ctx, deletion); err != nil || len(got) != 0 {
		t.Errorf("deleting a parent whose child is gone from the API server: got %v, %v, want no refusal", got, err)
	}
	if got := len(acct.Store.Children("parent")); got != 1 {
		t.Fatalf("the cache holds %d children of parent, want the stale one", got)
	}

	// A namespace the cache has not seen yet: its labels come from the API server.
	ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "new", Labels: map[string]string{"team": "a"}}}
	s.kube = kubefake.NewClientset(ns)
	work := func(v rules.View) field.ErrorList {
		return rules.AcceptsWork(field.NewPath("spec", "queue"), "team", "new", false, v)
	}
	if got := work(acct.Rules()); len(got) != 1 {
		t.Fatalf("on the cache alone: got %v, want a refusal", got)
	}
	if got, err := s.judge(ctx, work); err != nil || len(got) != 0 {
		t.Errorf("a selected namespace the cache has not seen: got %v, %v, want it admitted", got, err)
	}
}
