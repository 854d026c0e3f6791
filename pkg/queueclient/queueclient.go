// Package queueclient builds clients of the queue-scheduler API from any rest.Config.
package queueclient

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned"
)

// New returns a typed client of the queue-scheduler API.
func New(cfg *rest.Config) (versioned.Interface, error) {
	return versioned.NewForConfig(JSONConfig(cfg))
}

// JSONConfig is cfg speaking JSON. Custom resources speak JSON only, so a config set up for protobuf
// (the scheduler's, the API server's loopback) is switched to JSON for their clients.
func JSONConfig(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.ContentType, cfg.AcceptContentTypes = runtime.ContentTypeJSON, runtime.ContentTypeJSON
	return cfg
}
