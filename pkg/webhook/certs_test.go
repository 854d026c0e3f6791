package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
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
