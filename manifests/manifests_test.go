package manifests

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
	"sigs.k8s.io/yaml"

	"github.com/queue-scheduler/queue-scheduler/apis/config"
	"github.com/queue-scheduler/queue-scheduler/pkg/webhook"
)

// loadSchedulerConfig reads a KubeSchedulerConfiguration the way kube-scheduler does and validates it.
func loadSchedulerConfig(t *testing.T, data []byte) map[string]any {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	logger, _ := ktesting.NewTestContext(t)
	cfg, err := options.LoadConfigFromFile(logger, path)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if err := validation.ValidateKubeSchedulerConfiguration(cfg); err != nil {
		t.Fatalf("validate: %v", err)
	}
	out := map[string]any{}
	if err := yaml.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSchedulerConfigIsValid(t *testing.T) {
	loadSchedulerConfig(t, SchedulerConfig)
}

// The deployment's ConfigMap carries the same profiles as the sample configuration.
func TestDeploymentUsesTheSampleProfiles(t *testing.T) {
	data, err := os.ReadFile("deploy/scheduler.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cm := findObject[v1.ConfigMap](t, data, "ConfigMap")
	deployed := loadSchedulerConfig(t, []byte(cm.Data["scheduler-config.yaml"]))
	sample := loadSchedulerConfig(t, SchedulerConfig)
	if diff := cmp.Diff(sample["profiles"], deployed["profiles"]); diff != "" {
		t.Errorf("profiles differ (-sample,+deployed):\n%s", diff)
	}
}

// findObject returns the first document of kind in a multi-document manifest.
func findObject[T any](t *testing.T, data []byte, kind string) *T {
	t.Helper()
	for _, doc := range splitYAML(data) {
		var meta struct{ Kind string }
		if err := yaml.Unmarshal(doc, &meta); err != nil || meta.Kind != kind {
			continue
		}
		obj := new(T)
		if err := yaml.Unmarshal(doc, obj); err != nil {
			t.Fatalf("decode %s: %v", kind, err)
		}
		return obj
	}
	t.Fatalf("manifest has no %s", kind)
	return nil
}

func splitYAML(data []byte) [][]byte {
	var docs [][]byte
	start := 0
	for i := 0; i+4 <= len(data); i++ {
		if string(data[i:i+4]) == "---\n" && (i == 0 || data[i-1] == '\n') {
			docs = append(docs, data[start:i])
			start = i + 4
		}
	}
	return append(docs, data[start:])
}

// The shipped webhook configuration is the one the code defines.
func TestWebhookManifestMatchesTheCode(t *testing.T) {
	data, err := os.ReadFile("deploy/webhook.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got := findObject[admissionregistrationv1.ValidatingWebhookConfiguration](t, data, "ValidatingWebhookConfiguration")
	want := webhook.Configuration(config.DefaultConfigurationName,
		webhook.ServiceClientConfig("queue-scheduler-system", config.DefaultServiceName))
	if diff := cmp.Diff(want.Webhooks, got.Webhooks); diff != "" {
		t.Errorf("webhooks differ (-code,+manifest); run make generate:\n%s", diff)
	}
	gotMutating := findObject[admissionregistrationv1.MutatingWebhookConfiguration](t, data, "MutatingWebhookConfiguration")
	wantMutating := webhook.MutatingConfiguration(config.DefaultConfigurationName,
		webhook.ServiceClientConfig("queue-scheduler-system", config.DefaultServiceName))
	if diff := cmp.Diff(wantMutating.Webhooks, gotMutating.Webhooks); diff != "" {
		t.Errorf("mutating webhooks differ (-code,+manifest); run make generate:\n%s", diff)
	}
}

// The Deployment runs the image make image names by default, tagged with the release in VERSION, as
// README.md's install command expects when it substitutes the registry's reference.
func TestDeploymentImageIsTheRelease(t *testing.T) {
	data, err := os.ReadFile("deploy/scheduler.yaml")
	if err != nil {
		t.Fatal(err)
	}
	version, err := os.ReadFile("../VERSION")
	if err != nil {
		t.Fatal(err)
	}
	deployment := findObject[appsv1.Deployment](t, data, "Deployment")
	want := "queue-scheduler:" + strings.TrimSpace(string(version))
	if got := deployment.Spec.Template.Spec.Containers[0].Image; got != want {
		t.Errorf("Deployment image %q, want %q", got, want)
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	sed := regexp.MustCompile(`sed "s\|(image: [^|]+)\|`).FindSubmatch(readme)
	if sed == nil {
		t.Fatal("README.md has no install command that substitutes the image (sed \"s|image: …|…|\")")
	}
	if pattern, err := regexp.Compile("^" + string(sed[1]) + "$"); err != nil || !pattern.MatchString("image: "+want) {
		t.Errorf("README.md's install command substitutes %q, which does not match image: %s (%v)", sed[1], want, err)
	}
}
