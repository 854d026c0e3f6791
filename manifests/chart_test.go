package manifests

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/queue-scheduler/queue-scheduler/apis/config"
)

// renderChart runs the pinned helm's template of charts/queue-scheduler into the namespace of
// install.yaml with the given --set values.
func renderChart(t *testing.T, set ...string) []*unstructured.Unstructured {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"-C", filepath.Join(root, "hack", "tools"), "tool", "helm", "template", "qs", filepath.Join(root, "charts", "queue-scheduler"),
		"--namespace", "queue-scheduler-system", "--kube-version", "1.37.0", "--include-crds"}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, stderr.String())
	}
	return decodeObjects(t, out)
}

func decodeObjects(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objects []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		err := decoder.Decode(&obj.Object)
		if errors.Is(err, io.EOF) {
			return objects
		}
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		if len(obj.Object) > 0 {
			objects = append(objects, obj)
		}
	}
}

// comparable keys objects by kind, namespace and name, without what the chart adds for Helm's sake:
// labels and annotations of the objects and of the pods (a configuration checksum that rolls them).
// The scheduler configuration is compared parsed, not as text.
func comparable(t *testing.T, objects []*unstructured.Unstructured) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, obj := range objects {
		obj = obj.DeepCopy()
		unstructured.RemoveNestedField(obj.Object, "metadata", "labels")
		unstructured.RemoveNestedField(obj.Object, "metadata", "annotations")
		unstructured.RemoveNestedField(obj.Object, "spec", "template", "metadata", "annotations")
		if obj.GetKind() == "ConfigMap" {
			text, _, _ := unstructured.NestedString(obj.Object, "data", "scheduler-config.yaml")
			var parsed map[string]any
			if err := yaml.Unmarshal([]byte(text), &parsed); err != nil {
				t.Fatalf("ConfigMap %s: %v", obj.GetName(), err)
			}
			obj.Object["data"] = parsed
		}
		out[obj.GetKind()+" "+obj.GetNamespace()+"/"+obj.GetName()] = obj.Object
	}
	return out
}

// With default values the chart renders the objects of install.yaml (which the install test applies
// with RBAC on), but the Namespace, which Helm creates (--create-namespace).
func TestChartRendersTheInstallManifest(t *testing.T) {
	var install []*unstructured.Unstructured
	for _, obj := range decodeObjects(t, Install) {
		if obj.GetKind() != "Namespace" {
			install = append(install, obj)
		}
	}
	if diff := cmp.Diff(comparable(t, install), comparable(t, renderChart(t))); diff != "" {
		t.Errorf("chart with default values differs from install.yaml (-install.yaml,+chart):\n%s", diff)
	}
}

// With cert-manager, a Certificate is issued (by a self-signed Issuer of the chart unless an issuer is
// named), mounted where the QueueState args say, and injected into both webhook configurations; the
// plugin args of the values reach a configuration kube-scheduler accepts.
func TestChartWithCertManagerAndPluginArgs(t *testing.T) {
	objects := renderChart(t, "webhook.certManager.enabled=true", "pluginArgs.gang.defaultScheduleTimeoutSeconds=120",
		"backfill.enabled=true", "backfill.args.maxReservations=3")
	byKey := map[string]*unstructured.Unstructured{}
	for _, obj := range objects {
		byKey[obj.GetKind()+"/"+obj.GetName()] = obj
	}
	for _, key := range []string{"Issuer/queue-scheduler-selfsigned", "Certificate/queue-scheduler-webhook"} {
		if byKey[key] == nil {
			t.Errorf("no %s rendered", key)
		}
	}
	for _, key := range []string{"ValidatingWebhookConfiguration/queue-scheduler", "MutatingWebhookConfiguration/queue-scheduler",
		"APIService/v1beta1.visibility.queue-scheduler.io"} {
		if got := byKey[key].GetAnnotations()["cert-manager.io/inject-ca-from"]; got != "queue-scheduler-system/queue-scheduler-webhook" {
			t.Errorf("%s: inject-ca-from %q", key, got)
		}
	}
	var cm v1.ConfigMap
	fromUnstructured(t, byKey["ConfigMap/queue-scheduler-config"], &cm)
	cfg := loadSchedulerConfig(t, []byte(cm.Data["scheduler-config.yaml"]))
	args := pluginArgs(t, cfg)
	queueState, err := config.Decode(&runtime.Unknown{Raw: args["QueueState"]}, "queue-scheduler-system")
	if err != nil {
		t.Fatal(err)
	}
	gang, err := config.DecodeGang(&runtime.Unknown{Raw: args["Gang"]})
	if err != nil {
		t.Fatal(err)
	}
	if gang.DefaultScheduleTimeoutSeconds != 120 {
		t.Errorf("Gang args: %+v, want a 120 s timeout", gang)
	}
	backfill, err := config.DecodeBackfill(&runtime.Unknown{Raw: args["Backfill"]})
	if err != nil || *backfill.MaxReservations != 3 {
		t.Errorf("Backfill args: %+v, %v; want 3 reservations", backfill, err)
	}
	if !strings.Contains(cm.Data["scheduler-config.yaml"], "      - name: Backfill\n") {
		t.Errorf("Backfill is not enabled:\n%s", cm.Data["scheduler-config.yaml"])
	}
	var deployment appsv1.Deployment
	fromUnstructured(t, byKey["Deployment/queue-scheduler"], &deployment)
	mounted := false
	for _, m := range deployment.Spec.Template.Spec.Containers[0].VolumeMounts {
		mounted = mounted || (m.Name == "webhook-certs" && m.MountPath == queueState.Webhook.CertDir)
	}
	if queueState.Webhook.CertDir == "" || !mounted {
		t.Errorf("certDir %q is not where the certificate is mounted: %+v", queueState.Webhook.CertDir, deployment.Spec.Template.Spec.Containers[0].VolumeMounts)
	}
	var webhook admissionregistrationv1.ValidatingWebhookConfiguration
	fromUnstructured(t, byKey["ValidatingWebhookConfiguration/queue-scheduler"], &webhook)
	if p := webhook.Webhooks[0].FailurePolicy; p == nil || *p != admissionregistrationv1.Fail {
		t.Errorf("failurePolicy %v, want Fail by default", p)
	}
}

// pluginArgs returns the raw args of each plugin of the first profile.
// With the live view off, neither its APIService nor its Service is rendered, and the scheduler is
// told not to serve it.
func TestChartWithoutTheLiveView(t *testing.T) {
	objects := renderChart(t, "visibility.enabled=false")
	var cm v1.ConfigMap
	for _, obj := range objects {
		switch key := obj.GetKind() + "/" + obj.GetName(); key {
		case "APIService/v1beta1.visibility.queue-scheduler.io", "Service/queue-scheduler-visibility":
			t.Errorf("%s rendered with the live view off", key)
		case "ConfigMap/queue-scheduler-config":
			fromUnstructured(t, obj, &cm)
		}
	}
	args := pluginArgs(t, loadSchedulerConfig(t, []byte(cm.Data["scheduler-config.yaml"])))
	queueState, err := config.Decode(&runtime.Unknown{Raw: args["QueueState"]}, "queue-scheduler-system")
	if err != nil {
		t.Fatal(err)
	}
	if queueState.Serves() {
		t.Errorf("QueueState args %+v serve the live view", queueState.Visibility)
	}
}

func pluginArgs(t *testing.T, cfg map[string]any) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	profile := cfg["profiles"].([]any)[0].(map[string]any)
	list, _ := profile["pluginConfig"].([]any)
	for _, pc := range list {
		pc := pc.(map[string]any)
		raw, err := yaml.Marshal(pc["args"])
		if err != nil {
			t.Fatal(err)
		}
		if out[pc["name"].(string)], err = yaml.YAMLToJSON(raw); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func fromUnstructured(t *testing.T, obj *unstructured.Unstructured, into any) {
	t.Helper()
	if obj == nil {
		t.Fatal("object not rendered")
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, into); err != nil {
		t.Fatal(err)
	}
}
