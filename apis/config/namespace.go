package config

import "os"

// LeaseNamespaceEnv names the environment variable that holds the replica's namespace; the Deployment
// sets it from the pod's namespace. kube-system when unset.
const LeaseNamespaceEnv = "POD_NAMESPACE"

// DefaultNamespace is where the lease and the certificate Secret live unless args say otherwise: the
// replica's namespace.
func DefaultNamespace() string {
	if ns := os.Getenv(LeaseNamespaceEnv); ns != "" {
		return ns
	}
	return "kube-system"
}
