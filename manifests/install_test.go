package manifests

import (
	"os"
	"regexp"
	"testing"

	"sigs.k8s.io/yaml"
)

// install.yaml holds every object of crds/ and deploy/, in the order an empty cluster accepts them:
// the namespace first, the CRDs before anything else of ours, the webhook configurations last, once
// what serves them is declared.
func TestInstallManifestOrder(t *testing.T) {
	raw, err := os.ReadFile("install.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(raw), -1) {
		var meta struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatalf("install.yaml: %v", err)
		}
		if meta.Kind != "" {
			kinds = append(kinds, meta.Kind)
		}
		if meta.Metadata.Namespace != "" && meta.Metadata.Namespace != "queue-scheduler-system" && meta.Metadata.Namespace != "kube-system" {
			t.Errorf("%s in namespace %q", meta.Kind, meta.Metadata.Namespace)
		}
	}
	if len(kinds) == 0 || kinds[0] != "Namespace" {
		t.Fatalf("install.yaml starts with %v, want the Namespace", kinds)
	}
	seenOther, seenWebhook := false, false
	for _, kind := range kinds[1:] {
		switch kind {
		case "CustomResourceDefinition":
			if seenOther {
				t.Error("a CRD comes after other objects")
			}
		case "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration":
			seenWebhook = true
		default:
			seenOther = true
			if seenWebhook {
				t.Errorf("%s comes after a webhook configuration", kind)
			}
		}
	}
	if !seenWebhook {
		t.Error("install.yaml has no webhook configuration")
	}
}
