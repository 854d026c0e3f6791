package webhook

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Certificate lifetimes: the serving certificate is renewed when less than renewBefore remains.
const (
	caValidity      = 10 * 365 * 24 * time.Hour
	servingValidity = 365 * 24 * time.Hour
	renewBefore     = 30 * 24 * time.Hour
)

// Keys of the certificate Secret.
const (
	caCertKey  = "ca.crt"
	caKeyKey   = "ca.key"
	tlsCertKey = v1.TLSCertKey
	tlsKeyKey  = v1.TLSPrivateKeyKey
)

// bundle is the CA and serving certificate the replicas share through one Secret.
type bundle struct {
	caPEM, caKeyPEM, certPEM, keyPEM []byte
}

func (b *bundle) data() map[string][]byte {
	return map[string][]byte{caCertKey: b.caPEM, caKeyKey: b.caKeyPEM, tlsCertKey: b.certPEM, tlsKeyKey: b.keyPEM}
}

func bundleFrom(s *v1.Secret) *bundle {
	return &bundle{caPEM: s.Data[caCertKey], caKeyPEM: s.Data[caKeyKey], certPEM: s.Data[tlsCertKey], keyPEM: s.Data[tlsKeyKey]}
}

// usable says whether the serving certificate parses, covers the names and has time left.
func (b *bundle) usable(dnsNames []string, ips []net.IP, now time.Time) bool {
	pair, err := tls.X509KeyPair(b.certPEM, b.keyPEM)
	if err != nil || len(b.caPEM) == 0 {
		return false
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil || now.Add(renewBefore).After(leaf.NotAfter) {
		return false
	}
	for _, name := range dnsNames {
		if !slices.Contains(leaf.DNSNames, name) {
			return false
		}
	}
	for _, ip := range ips {
		if !slices.ContainsFunc(leaf.IPAddresses, ip.Equal) {
			return false
		}
	}
	return true
}

// certStore keeps the webhook's certificates in a Secret, so that all replicas serve with one CA.
type certStore struct {
	kube            kubernetes.Interface
	namespace, name string
	dnsNames        []string
	ips             []net.IP
	now             func() time.Time
}

// ensure returns a usable bundle, issuing a new serving certificate (and a CA if none is usable) when
// needed. Replicas racing to write lose with a conflict and read the winner's.
func (s *certStore) ensure(ctx context.Context) (*bundle, error) {
	secret, err := s.kube.CoreV1().Secrets(s.namespace).Get(ctx, s.name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		secret = nil
	case err != nil:
		return nil, fmt.Errorf("read certificate Secret %s/%s: %w", s.namespace, s.name, err)
	}
	var current *bundle
	if secret != nil {
		if current = bundleFrom(secret); current.usable(s.dnsNames, s.ips, s.now()) {
			return current, nil
		}
	}
	b, genErr := s.issue(current)
	if genErr != nil {
		return nil, genErr
	}
	if err := s.write(ctx, secret, b); apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err) {
		return s.ensure(ctx)
	} else if err != nil {
		return nil, err
	}
	return b, nil
}

func (s *certStore) write(ctx context.Context, existing *v1.Secret, b *bundle) error {
	if existing == nil {
		secret := &v1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: s.namespace, Name: s.name},
			Type:       v1.SecretTypeTLS,
			Data:       b.data(),
		}
		_, err := s.kube.CoreV1().Secrets(s.namespace).Create(ctx, secret, metav1.CreateOptions{})
		return err
	}
	updated := existing.DeepCopy()
	updated.Data = b.data()
	_, err := s.kube.CoreV1().Secrets(s.namespace).Update(ctx, updated, metav1.UpdateOptions{})
	return err
}

// issue signs a new serving certificate with the current CA when it is still good, else with a new CA.
func (s *certStore) issue(current *bundle) (*bundle, error) {
	now := s.now()
	ca, caKey, caPEM, caKeyPEM, err := reuseCA(current, now)
	if err != nil || ca == nil {
		if ca, caKey, caPEM, caKeyPEM, err = newCA(now); err != nil {
			return nil, err
		}
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: s.name},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(servingValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     s.dnsNames,
		IPAddresses:  s.ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("sign webhook serving certificate: %w", err)
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return nil, err
	}
	return &bundle{caPEM: caPEM, caKeyPEM: caKeyPEM, certPEM: pemBlock("CERTIFICATE", der), keyPEM: keyPEM}, nil
}

func reuseCA(current *bundle, now time.Time) (*x509.Certificate, *ecdsa.PrivateKey, []byte, []byte, error) {
	if current == nil {
		return nil, nil, nil, nil, nil
	}
	block, _ := pem.Decode(current.caPEM)
	keyBlock, _ := pem.Decode(current.caKeyPEM)
	if block == nil || keyBlock == nil {
		return nil, nil, nil, nil, nil
	}
	ca, err := x509.ParseCertificate(block.Bytes)
	if err != nil || now.Add(servingValidity).After(ca.NotAfter) {
		return nil, nil, nil, nil, err
	}
	key, err := x509.ParseECPrivateKey(keyBlock.Bytes)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	return ca, key, current.caPEM, current.caKeyPEM, nil
}

func newCA(now time.Time) (*x509.Certificate, *ecdsa.PrivateKey, []byte, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "queue-scheduler-webhook-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(caValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("create webhook CA: %w", err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	return ca, key, pemBlock("CERTIFICATE", der), keyPEM, nil
}

func encodeKey(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pemBlock("EC PRIVATE KEY", der), nil
}

func pemBlock(typ string, der []byte) []byte {
	var buf bytes.Buffer
	_ = pem.Encode(&buf, &pem.Block{Type: typ, Bytes: der})
	return buf.Bytes()
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return big.NewInt(time.Now().UnixNano())
	}
	return n
}
