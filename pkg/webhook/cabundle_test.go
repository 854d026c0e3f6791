package webhook

import (
	"bytes"
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	aggregatorfake "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset/fake"
	"k8s.io/utils/ptr"

	"github.com/queue-scheduler/queue-scheduler/apis/config"
)

// The live view's APIService gets the webhook's CA, as the webhook configurations do, also when an
// apply has dropped it; an APIService served by the API server itself (no service) has no CA to take.
func TestCABundleWrittenIntoTheViewsAPIService(t *testing.T) {
	ctx := context.Background()
	view := &apiregistrationv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: config.VisibilityAPIService},
		Spec: apiregistrationv1.APIServiceSpec{Service: &apiregistrationv1.ServiceReference{Namespace: "ns", Name: "svc", Port: ptr.To[int32](443)},
			CABundle: []byte("an older CA")}}
	local := &apiregistrationv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: "v1.local"}}
	api := aggregatorfake.NewSimpleClientset(view, local).ApiregistrationV1().APIServices()
	ca := []byte("the CA")
	for _, name := range []string{view.Name, local.Name} {
		if err := patchCA(ctx, api, name, ca); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	got, err := api.Get(ctx, view.Name, metav1.GetOptions{})
	if err != nil || !bytes.Equal(got.Spec.CABundle, ca) {
		t.Errorf("the view's APIService: caBundle %q, %v; want the webhook's CA", got.Spec.CABundle, err)
	}
	if lacksCA(got, ca) {
		t.Error("the patched APIService still lacks the CA")
	}
	if got, _ := api.Get(ctx, local.Name, metav1.GetOptions{}); len(got.Spec.CABundle) != 0 || lacksCA(got, ca) {
		t.Errorf("a local APIService: caBundle %q; want none, and nothing lacking", got.Spec.CABundle)
	}
}
