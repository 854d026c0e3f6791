package localcluster

import (
	"errors"
	"fmt"
	"path"

	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/client-go/rest"
	apiservertesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
)

// defaultAPIServerFlags keep a cluster without kubelets or controller-manager usable: no service
// account tokens to wait for, and no not-ready taints on fake nodes.
var defaultAPIServerFlags = []string{
	"--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
	"--max-requests-inflight=3000",
	"--max-mutating-requests-inflight=1000",
}

// apiServer is a kube-apiserver running inside this process.
type apiServer struct {
	config   *rest.Config
	tb       *processTB
	tearDown func()
}

// startAPIServer starts the upstream kube-apiserver in process on the given etcd.
func startAPIServer(etcdURL string, extraFlags []string) (s *apiServer, err error) {
	tb := newProcessTB("kube-apiserver")
	defer func() {
		if r := recover(); r != nil {
			var fe fatalError
			if e, ok := r.(error); ok && errors.As(e, &fe) {
				tb.runCleanups()
				err = fmt.Errorf("start kube-apiserver: %w", fe)
				return
			}
			panic(r)
		}
	}()

	storage := storagebackend.NewDefaultConfig(path.Join("localcluster", "registry"), nil)
	storage.Transport.ServerList = []string{etcdURL}
	opts := apiservertesting.NewDefaultTestServerOptions()
	opts.DisableInvariantChecks = true
	flags := append(append([]string{}, defaultAPIServerFlags...), extraFlags...)

	server, err := apiservertesting.StartTestServer(tb, opts, flags, storage)
	if err != nil {
		tb.runCleanups()
		return nil, fmt.Errorf("start kube-apiserver: %w", err)
	}
	return &apiServer{config: server.ClientConfig, tb: tb, tearDown: server.TearDownFn}, nil
}

// stop shuts the API server down and removes what it left on disk.
func (s *apiServer) stop() {
	s.tearDown()
	s.tb.runCleanups()
}
