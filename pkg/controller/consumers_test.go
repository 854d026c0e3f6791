package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic/dynamicinformer"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned/fake"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

func TestFinished(t *testing.T) {
	withConditions := func(conditions ...map[string]any) *unstructured.Unstructured {
		list := make([]any, 0, len(conditions))
		for _, c := range conditions {
			list = append(list, c)
		}
		return &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": list}}}
	}
	for _, tt := range []struct {
		name string
		obj  *unstructured.Unstructured
		want bool
	}{
		{"no status", &unstructured.Unstructured{Object: map[string]any{}}, false},
		{"Job complete", withConditions(map[string]any{"type": "SuccessCriteriaMet", "status": "True"}, map[string]any{"type": "Complete", "status": "True"}), true},
		{"Job failed", withConditions(map[string]any{"type": "Failed", "status": "True"}), true},
		{"Kubeflow succeeded", withConditions(map[string]any{"type": "Running", "status": "False"}, map[string]any{"type": "Succeeded", "status": "True"}), true},
		{"JobSet completed", withConditions(map[string]any{"type": "Completed", "status": "True"}), true},
		{"condition not true", withConditions(map[string]any{"type": "Complete", "status": "False"}), false},
		{"only interim conditions", withConditions(map[string]any{"type": "Suspended", "status": "True"}, map[string]any{"type": "FailureTarget", "status": "True"}), false},
		{"conditions not a list", &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": "Complete"}}}, false},
	} {
		if got := finished(tt.obj); got != tt.want {
			t.Errorf("%s: finished = %t, want %t", tt.name, got, tt.want)
		}
	}
}

func TestSuspendField(t *testing.T) {
	for _, tt := range []struct {
		name string
		spec map[string]any
		want []string
	}{
		{"batch Job suspended", map[string]any{"suspend": true}, []string{"spec", "suspend"}},
		{"batch Job running", map[string]any{"suspend": false}, nil},
		{"Kubeflow job suspended", map[string]any{"runPolicy": map[string]any{"suspend": true}}, []string{"spec", "runPolicy", "suspend"}},
		{"no switch", map[string]any{"replicas": int64(2)}, nil},
		{"switch of the wrong type", map[string]any{"suspend": "yes"}, nil},
	} {
		got := suspendField(&unstructured.Unstructured{Object: map[string]any{"spec": tt.spec}})
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("%s: suspendField = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// The cache can miss a consumer created a moment ago: only the API server's word that it is gone,
// or replaced, or being deleted, lets its unit be deleted.
func TestGoneFromServer(t *testing.T) {
	job := func(name, uid string, deleting bool) *unstructured.Unstructured {
		obj := &unstructured.Unstructured{}
		obj.SetAPIVersion("batch/v1")
		obj.SetKind("Job")
		obj.SetNamespace("ns")
		obj.SetName(name)
		obj.SetUID(types.UID(uid))
		if deleting {
			now := metav1.Now()
			obj.SetDeletionTimestamp(&now)
			obj.SetFinalizers([]string{"example.com/hold"})
		}
		return obj
	}
	jobs := schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{jobs: "JobList"}, job("running", "uid-1", false), job("deleting", "uid-2", true))
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}, meta.RESTScopeNamespace)
	c := &consumers{client: client, mapper: resettable{mapper}, clock: clock.RealClock{}}
	for _, tt := range []struct {
		name, uid string
		want      bool
	}{
		{"running", "uid-1", false},
		{"running", "", false},
		{"running", "uid-old", true},
		{"deleting", "uid-2", true},
		{"absent", "", true},
	} {
		ref := corev1.ObjectReference{APIVersion: "batch/v1", Kind: "Job", Name: tt.name, UID: types.UID(tt.uid)}
		got, err := c.goneFromServer(context.Background(), "ns", ref)
		if err != nil || got != tt.want {
			t.Errorf("goneFromServer(%s, uid %q) = %t, %v; want %t", tt.name, tt.uid, got, err, tt.want)
		}
	}
}

// resettable is a static RESTMapper that has nothing to reset.
type resettable struct{ meta.RESTMapper }

func (resettable) Reset() {}

// A consumer of a kind queue-scheduler may not read, or of a kind not served, is out of reach: the
// unit waits with that reason instead of failing its sync, and no informer is started for a kind
// queue-scheduler may not watch.
func TestConsumerOutOfReach(t *testing.T) {
	jobs := schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{jobs: "JobList"})
	client.PrependReactor("*", "jobs", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "batch", Resource: "jobs"}, "j", errors.New("RBAC: access denied"))
	})
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}, meta.RESTScopeNamespace)
	kube := kubefake.NewClientset()
	kube.PrependReactor("create", "selfsubjectaccessreviews", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, &authorizationv1.SelfSubjectAccessReview{Status: authorizationv1.SubjectAccessReviewStatus{Allowed: false}}, nil
	})
	c := &consumers{client: client, mapper: resettable{mapper}, clock: clock.RealClock{}, access: kube.AuthorizationV1().SelfSubjectAccessReviews(),
		factory: dynamicinformer.NewDynamicSharedInformerFactory(client, 0),
		watched: map[schema.GroupKind]cache.SharedIndexInformer{}, unmapped: map[schema.GroupKind]time.Time{}, stop: make(chan struct{})}
	job := corev1.ObjectReference{APIVersion: "batch/v1", Kind: "Job", Name: "j"}
	err := c.unsuspend(context.Background(), "ns", job)
	if !errors.As(err, new(errConsumerOutOfReach)) || !strings.Contains(err.Error(), "queue-scheduler may not read or update Job of batch/v1: grant it in the queue-scheduler ClusterRole") {
		t.Errorf("unsuspend of a forbidden kind: %v, want it out of reach, naming the kind and the ClusterRole", err)
	}
	if _, err := c.goneFromServer(context.Background(), "ns", job); !errors.As(err, new(errConsumerOutOfReach)) {
		t.Errorf("goneFromServer of a forbidden kind: %v, want it out of reach", err)
	}
	if c.informerFor(job) != nil || len(c.watched) != 0 {
		t.Errorf("an informer was started for a kind queue-scheduler may not watch")
	}
	tf := corev1.ObjectReference{APIVersion: "kubeflow.org/v1", Kind: "TFJob", Name: "t"}
	if err := c.unsuspend(context.Background(), "ns", tf); !errors.As(err, new(errConsumerOutOfReach)) || !strings.Contains(err.Error(), "is not served") {
		t.Errorf("unsuspend of a kind not served: %v, want it out of reach", err)
	}
}

// A Dequeued unit whose consumer finished gives back what it reserved: an admission pass runs over
// the Pending groups of its queue's tree, whose capabilities above counted the reservation.
func TestFinishedConsumerOffersItsRoomToTheTree(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	unit := util.MakeQueueUnit("ns", "u", "a", "j").Resource(map[corev1.ResourceName]string{corev1.ResourceCPU: "8"}).Obj()
	unit.Status.Phase = schedulingv1beta1.QueueUnitDequeued
	queues := fake.NewSimpleClientset(util.MakeQueue("root").Obj(), util.MakeQueue("org").Obj(), util.MakeQueue("a").Parent("org").Obj(),
		util.MakeQueue("b").Parent("org").Obj(), unit,
		util.MakePodGroup("ns", "in-b").Queue("b").MinResources(map[corev1.ResourceName]string{corev1.ResourceCPU: "4"}).Obj())
	acct := startAccounting(t, ctx, queues, kubefake.NewClientset())
	done := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "batch/v1", "kind": "Job",
		"metadata": map[string]any{"namespace": "ns", "name": "j"},
		"status":   map[string]any{"conditions": []any{map[string]any{"type": "Complete", "status": "True"}}}}}
	jobs := schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{jobs: "JobList"}, done)
	inf := dynamicinformer.NewDynamicSharedInformerFactory(client, 0).ForResource(jobs).Informer()
	go inf.Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("the Jobs' informer never synced")
	}
	c := &Controller{acct: acct, clock: clock.RealClock{}, wq: newWorkqueues(clock.RealClock{}),
		consumers: &consumers{watched: map[schema.GroupKind]cache.SharedIndexInformer{{Group: "batch", Kind: "Job"}: inf}}}
	defer c.wq.shutDown()
	c.onConsumer("batch/v1", "Job", done)
	if got := drain(c.wq.admissions); !slices.Equal(got, []string{"b"}) {
		t.Errorf("admission passes once the unit's Job finished: %v, want b's (its sibling with a Pending group)", got)
	}
}
