package webhook

import (
	"bytes"
	"sync"

	"k8s.io/apiserver/pkg/server/dynamiccertificates"
)

// ServingCert is the webhook's serving certificate for another server of the process (the live
// view's API server): the same certificate, renewed with it, so that one CA bundle verifies both.
func (s *Server) ServingCert() dynamiccertificates.CertKeyContentProvider { return &s.serving }

// servingCert holds the current certificate and key in PEM and tells its listeners when they change.
type servingCert struct {
	mu        sync.Mutex
	cert, key []byte
	listeners []dynamiccertificates.Listener
}

var _ dynamiccertificates.CertKeyContentProvider = &servingCert{}

// Name names the certificate in the serving server's logs.
func (c *servingCert) Name() string { return "queue-scheduler-webhook-certs" }

// CurrentCertKeyContent returns the certificate and key in PEM.
func (c *servingCert) CurrentCertKeyContent() (cert []byte, key []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cert, c.key
}

// AddListener is told of every new certificate.
func (c *servingCert) AddListener(l dynamiccertificates.Listener) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.listeners = append(c.listeners, l)
}

func (c *servingCert) set(cert, key []byte) {
	c.mu.Lock()
	changed := !bytes.Equal(cert, c.cert) || !bytes.Equal(key, c.key)
	c.cert, c.key = cert, key
	listeners := c.listeners
	c.mu.Unlock()
	if changed {
		for _, l := range listeners {
			l.Enqueue()
		}
	}
}
