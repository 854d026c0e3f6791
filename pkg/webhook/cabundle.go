package webhook

import (
	"bytes"
	"context"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	aggregatorinformers "k8s.io/kube-aggregator/pkg/client/informers/externalversions"

	"github.com/queue-scheduler/queue-scheduler/apis/config"
)

// watchConfigurations writes the CA bundle back whenever the webhook configurations or the live
// view's APIService are created or edited without it (kubectl apply of the shipped manifests, say), instead of at the next hourly
// certificate check: until then the API server could not call the webhook. One key is queued for
// both configurations; the patch reads and writes both.
func (s *Server) watchConfigurations(ctx context.Context) error {
	queue := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "webhook-ca-bundle"})
	factory := informers.NewSharedInformerFactoryWithOptions(s.kube, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", s.args.ConfigurationName).String()
	}))
	admission := factory.Admissionregistration().V1()
	onChange := func(obj any) {
		if lacksCA(obj, s.CABundle()) {
			queue.Add(s.args.ConfigurationName)
		}
	}
	handler := cache.ResourceEventHandlerFuncs{AddFunc: onChange, UpdateFunc: func(_, obj any) { onChange(obj) }}
	if _, err := admission.ValidatingWebhookConfigurations().Informer().AddEventHandler(handler); err != nil {
		return err
	}
	if _, err := admission.MutatingWebhookConfigurations().Informer().AddEventHandler(handler); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	if s.apiServices != nil {
		views := aggregatorinformers.NewSharedInformerFactoryWithOptions(s.apiServices, 0, aggregatorinformers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", config.VisibilityAPIService).String()
		}))
		if _, err := views.Apiregistration().V1().APIServices().Informer().AddEventHandler(handler); err != nil {
			return err
		}
		views.Start(ctx.Done())
	}
	go func() {
		<-ctx.Done()
		queue.ShutDown()
	}()
	go func() {
		for s.patchNext(ctx, queue) {
		}
	}()
	return nil
}

func (s *Server) patchNext(ctx context.Context, queue workqueue.TypedRateLimitingInterface[string]) bool {
	key, shutdown := queue.Get()
	if shutdown {
		return false
	}
	defer queue.Done(key)
	if err := s.patchCABundle(ctx); err != nil {
		klog.FromContext(ctx).Error(err, "Writing the CA bundle into the webhook configurations; retrying")
		queue.AddRateLimited(key)
		return true
	}
	queue.Forget(key)
	return true
}

// lacksCA says whether a webhook configuration has a webhook, or an APIService has a service,
// whose CA bundle is not ca.
func lacksCA(cfg any, ca []byte) bool {
	for _, bundle := range caBundles(cfg) {
		if !bytes.Equal(*bundle, ca) {
			return true
		}
	}
	return false
}

// caBundles returns the CA bundles of a webhook configuration's webhooks, or of an APIService, to
// read or write in place.
func caBundles(cfg any) []*[]byte {
	var out []*[]byte
	switch cfg := cfg.(type) {
	case *admissionregistrationv1.ValidatingWebhookConfiguration:
		for i := range cfg.Webhooks {
			out = append(out, &cfg.Webhooks[i].ClientConfig.CABundle)
		}
	case *admissionregistrationv1.MutatingWebhookConfiguration:
		for i := range cfg.Webhooks {
			out = append(out, &cfg.Webhooks[i].ClientConfig.CABundle)
		}
	case *apiregistrationv1.APIService:
		if cfg.Spec.Service != nil {
			out = append(out, &cfg.Spec.CABundle)
		}
	}
	return out
}
