package version

import "testing"

// A binary built without k8s.io/kubernetes (kubectl-queue) names the Kubernetes release of its
// client-go, not the staging module's own version.
func TestKubernetesOfStaging(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"v0.37.1", "v1.37.1"}, {"v0.38.0-alpha.1", "v1.38.0-alpha.1"}, {"v1.37.1", "v1.37.1"}, {"", ""},
	} {
		if got := kubernetesOfStaging(tt.in); got != tt.want {
			t.Errorf("kubernetesOfStaging(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
