package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/queue-scheduler/queue-scheduler/apis/config"
)

func newStore(client *fake.Clientset, now time.Time, dnsNames ...string) *certStore {
	return &certStore{kube: client, namespace: "ns", name: "certs", dnsNames: dnsNames,
		ips: []net.IP{net.ParseIP("127.0.0.1")}, now: func() time.Time { return now }}
}

// verify checks that the serving certificate chains to the CA for name.
func verify(t *testing.T, b *bundle, name string, at time.Time) {
	t.Helper()
	pair, err := tls.X509KeyPair(b.certPEM, b.keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(b.caPEM) {
		t.Fatal("CA does not parse")
	}
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: name, Roots: roots, CurrentTime: at}); err != nil {
		t.Errorf("certificate does not verify for %s: %v", name, err)
	}
}

func TestCertificatesAreIssuedOnceAndShared(t *testing.T) {
	client := fake.NewClientset()
	now := time.Now()
	first, err := newStore(client, now, "svc.ns.svc").ensure(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	verify(t, first, "svc.ns.svc", now)
	second, err := newStore(client, now, "svc.ns.svc").ensure(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.certPEM, second.certPEM) || !bytes.Equal(first.caPEM, second.caPEM) {
		t.Error("a second replica issued its own certificate instead of sharing the stored one")
	}
	secret, err := client.CoreV1().Secrets("ns").Get(context.Background(), "certs", metav1.GetOptions{})
	if err != nil || !bytes.Equal(secret.Data[tlsCertKey], first.certPEM) {
		t.Errorf("Secret does not hold the certificate: %v", err)
	}
}

func TestCertificateRenewedBeforeExpiryWithTheSameCA(t *testing.T) {
	client := fake.NewClientset()
	now := time.Now()
	first, err := newStore(client, now, "svc").ensure(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	later := now.Add(servingValidity - renewBefore + time.Hour)
	renewed, err := newStore(client, later, "svc").ensure(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(first.certPEM, renewed.certPEM) {
		t.Fatal("certificate within the renewal window was not renewed")
	}
	if !bytes.Equal(first.caPEM, renewed.caPEM) {
		t.Error("renewal replaced the CA: clients holding the old bundle would fail")
	}
	verify(t, renewed, "svc", later)
}

func TestCertificateReissuedForNewNames(t *testing.T) {
	client := fake.NewClientset()
	now := time.Now()
	if _, err := newStore(client, now, "old-name").ensure(context.Background()); err != nil {
		t.Fatal(err)
	}
	b, err := newStore(client, now, "new-name").ensure(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	verify(t, b, "new-name", now)
}

// With a certificate directory, the server serves what another issuer wrote and touches no Secret.
func TestCertDirServesAnotherIssuersCertificate(t *testing.T) {
	issued, err := newStore(fake.NewClientset(), time.Now(), "svc").ensure(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, data := range map[string][]byte{tlsCertKey: issued.certPEM, tlsKeyKey: issued.keyPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	client := fake.NewClientset()
	s := &Server{args: config.WebhookArgs{CertDir: dir}, kube: client}
	if err := s.refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := s.cert.Load(); got == nil || !bytes.Equal(got.Certificate[0], mustDER(t, issued.certPEM)) {
		t.Error("server does not serve the certificate from the directory")
	}
	if n := len(client.Actions()); n != 0 {
		t.Errorf("server made %d API calls; want none", n)
	}
}

func mustDER(t *testing.T, certPEM []byte) []byte {
	t.Helper()
	block, _ := pem.Decode(certPEM)
	if block == nil {
		t.Fatal("no PEM block")
	}
	return block.Bytes
}
