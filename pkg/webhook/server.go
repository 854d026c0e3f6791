// Package webhook is the admission webhook server of queue-scheduler, served by the scheduler binary
// over TLS. It enforces the rules that involve more than one object (package validation), manages its
// own certificates through a Secret shared by all replicas, and keeps the caBundle of its
// ValidatingWebhookConfiguration current, so no cert-manager is needed.
package webhook

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	aggregatorclient "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"

	"github.com/queue-scheduler/queue-scheduler/apis/config"
	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
)

// Server serves admission reviews.
type Server struct {
	args config.WebhookArgs
	// gangs says which other APIs' PodGroups are gangs of queue-scheduler.
	gangs func(schedulingv1beta1.GangSource) bool
	// adminNamespace is the scheduler's own namespace: its Commands may operate any queue.
	adminNamespace string
	kube           kubernetes.Interface
	// apiServices reaches the live view's APIService, whose caBundle the server keeps current; nil
	// when the view is not served.
	apiServices aggregatorclient.Interface
	acct        *accounting.Accounting
	store       *certStore
	cert        atomic.Pointer[tls.Certificate]
	caPEM       atomic.Pointer[[]byte]
	serving     servingCert
}

// Start issues or loads the certificates, starts serving on args.BindAddress, patches the CA bundle
// into the webhook configurations (and, with apiServices, into the live view's APIService), and
// keeps the certificate renewed until ctx ends.
func Start(ctx context.Context, kube kubernetes.Interface, apiServices aggregatorclient.Interface, acct *accounting.Accounting,
	queueState *config.QueueStateArgs) (*Server, error) {
	args := queueState.Webhook
	s := &Server{args: args, gangs: queueState.TakesGangsOf, adminNamespace: queueState.Controller.LeaseNamespace, kube: kube,
		apiServices: apiServices, acct: acct, store: &certStore{
			kube: kube, namespace: args.CertSecretNamespace, name: args.CertSecretName,
			dnsNames: args.DNSNames, ips: parseIPs(args.IPAddresses), now: time.Now,
		}}
	if err := s.refresh(ctx); err != nil {
		return nil, err
	}
	listener, err := net.Listen("tcp", args.BindAddress)
	if err != nil {
		return nil, fmt.Errorf("webhook: listen on %s: %w", args.BindAddress, err)
	}
	server := &http.Server{
		Handler:           s.routes(),
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{
			MinVersion:     tls.VersionTLS12,
			GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return s.cert.Load(), nil },
		},
	}
	go func() {
		if err := server.ServeTLS(listener, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			klog.FromContext(ctx).Error(err, "Webhook server stopped")
		}
	}()
	context.AfterFunc(ctx, func() { _ = server.Close() })
	if args.CertDir == "" {
		if err := s.watchConfigurations(ctx); err != nil {
			return nil, err
		}
	}
	go wait.UntilWithContext(ctx, s.renew, args.CertCheckInterval.Duration)
	return s, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.args.BindAddress }

// CABundle is the PEM of the CA that signs the serving certificate.
func (s *Server) CABundle() []byte { return *s.caPEM.Load() }

// refresh loads the certificates: from CertDir when another issuer owns them, else from the shared
// Secret, issuing new ones when they are missing or about to expire.
func (s *Server) refresh(ctx context.Context) error {
	if s.args.CertDir != "" {
		certPEM, certErr := os.ReadFile(filepath.Join(s.args.CertDir, tlsCertKey))
		keyPEM, keyErr := os.ReadFile(filepath.Join(s.args.CertDir, tlsKeyKey))
		if err := errors.Join(certErr, keyErr); err != nil {
			return fmt.Errorf("webhook certificate from %s: %w", s.args.CertDir, err)
		}
		return s.use(certPEM, keyPEM)
	}
	b, err := s.store.ensure(ctx)
	if err != nil {
		return err
	}
	if err := s.use(b.certPEM, b.keyPEM); err != nil {
		return err
	}
	s.caPEM.Store(&b.caPEM)
	return nil
}

// use serves the certificate and key from now on, here and on the live view.
func (s *Server) use(certPEM, keyPEM []byte) error {
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return fmt.Errorf("webhook serving certificate: %w", err)
	}
	s.cert.Store(&pair)
	s.serving.set(certPEM, keyPEM)
	return nil
}

func (s *Server) renew(ctx context.Context) {
	if err := s.refresh(ctx); err != nil {
		klog.FromContext(ctx).Error(err, "Renewing the webhook certificate")
		return
	}
	if s.args.CertDir != "" {
		return
	}
	if err := s.patchCABundle(ctx); err != nil {
		klog.FromContext(ctx).Error(err, "Patching the webhook CA bundle")
	}
}

// patchCABundle writes the CA into every webhook of the validating and the mutating configuration,
// and into the live view's APIService.
func (s *Server) patchCABundle(ctx context.Context) error {
	ca, name := s.CABundle(), s.args.ConfigurationName
	admission := s.kube.AdmissionregistrationV1()
	errs := []error{
		patchCA(ctx, admission.ValidatingWebhookConfigurations(), name, ca),
		patchCA(ctx, admission.MutatingWebhookConfigurations(), name, ca),
	}
	if s.apiServices != nil {
		errs = append(errs, patchCA(ctx, s.apiServices.ApiregistrationV1().APIServices(), config.VisibilityAPIService, ca))
	}
	return errors.Join(errs...)
}

// configurations is the client of one kind of webhook configuration.
type configurations[T interface{ DeepCopyObject() runtime.Object }] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	Update(ctx context.Context, cfg T, opts metav1.UpdateOptions) (T, error)
}

// patchCA writes ca into every CA bundle of the named configuration that lacks it.
func patchCA[T interface{ DeepCopyObject() runtime.Object }](ctx context.Context, api configurations[T], name string, ca []byte) error {
	cfg, err := api.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		klog.FromContext(ctx).V(2).Info("No configuration to patch", "name", name, "kind", fmt.Sprintf("%T", cfg))
		return nil
	}
	if err != nil || !lacksCA(cfg, ca) {
		return err
	}
	updated, ok := cfg.DeepCopyObject().(T)
	if !ok {
		return fmt.Errorf("webhook configuration %q: unexpected copy %T", name, updated)
	}
	for _, bundle := range caBundles(updated) {
		*bundle = ca
	}
	_, err = api.Update(ctx, updated, metav1.UpdateOptions{})
	return err
}

func parseIPs(addrs []string) []net.IP {
	ips := make([]net.IP, 0, len(addrs))
	for _, a := range addrs {
		if ip := net.ParseIP(a); ip != nil {
			ips = append(ips, ip)
		}
	}
	return ips
}
