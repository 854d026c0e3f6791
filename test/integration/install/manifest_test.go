package install

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/queue-scheduler/queue-scheduler/manifests"
)

// installManifest is manifests/install.yaml, object by object, in its order.
type installManifest struct{ objects []*unstructured.Unstructured }

func readInstallManifest(t *testing.T) *installManifest {
	t.Helper()
	decoder := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifests.Install), 4096)
	m := &installManifest{}
	for {
		obj := &unstructured.Unstructured{}
		err := decoder.Decode(&obj.Object)
		if errors.Is(err, io.EOF) {
			return m
		}
		if err != nil {
			t.Fatalf("install.yaml: %v", err)
		}
		if len(obj.Object) > 0 {
			m.objects = append(m.objects, obj)
		}
	}
}

// find returns the object of kind and name.
func (m *installManifest) find(t *testing.T, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, obj := range m.objects {
		if obj.GetKind() == kind && obj.GetName() == name {
			return obj
		}
	}
	t.Fatalf("install.yaml has no %s %s", kind, name)
	return nil
}

// pointWebhooksAt replaces the webhooks' Service with a URL on this machine: the in-process API
// server has no cluster network to reach a Service through. Paths are kept.
func (m *installManifest) pointWebhooksAt(base string) {
	for _, obj := range m.objects {
		if obj.GetKind() != "ValidatingWebhookConfiguration" && obj.GetKind() != "MutatingWebhookConfiguration" {
			continue
		}
		webhooks, _, _ := unstructured.NestedSlice(obj.Object, "webhooks")
		for _, w := range webhooks {
			clientConfig := w.(map[string]any)["clientConfig"].(map[string]any)
			service := clientConfig["service"].(map[string]any)
			clientConfig["url"] = base + service["path"].(string)
			delete(clientConfig, "service")
		}
		_ = unstructured.SetNestedSlice(obj.Object, webhooks, "webhooks")
	}
}

// schedulerConfig writes the KubeSchedulerConfiguration of the shipped ConfigMap as the pod would
// mount it, with what the pod's environment would otherwise give: the kubeconfig of its
// ServiceAccount, and a webhook serving on this machine's loopback address.
func (m *installManifest) schedulerConfig(t *testing.T, dir, kubeconfig, webhookAddr string) string {
	t.Helper()
	data, _, _ := unstructured.NestedStringMap(m.find(t, "ConfigMap", "queue-scheduler-config").Object, "data")
	var cfg map[string]any
	if err := sigsyaml.Unmarshal([]byte(data["scheduler-config.yaml"]), &cfg); err != nil {
		t.Fatalf("scheduler-config.yaml of the ConfigMap: %v", err)
	}
	cfg["clientConnection"] = map[string]any{"kubeconfig": kubeconfig}
	profile := cfg["profiles"].([]any)[0].(map[string]any)
	pluginConfig, _ := profile["pluginConfig"].([]any)
	webhook := map[string]any{"bindAddress": webhookAddr, "ipAddresses": []any{"127.0.0.1"}}
	found := false
	for _, pc := range pluginConfig {
		if pc := pc.(map[string]any); pc["name"] == "QueueState" {
			args, _ := pc["args"].(map[string]any)
			if args == nil {
				args = map[string]any{}
				pc["args"] = args
			}
			shipped, _ := args["webhook"].(map[string]any)
			for k, v := range shipped {
				if _, set := webhook[k]; !set {
					webhook[k] = v
				}
			}
			args["webhook"] = webhook
			found = true
		}
	}
	if !found {
		pluginConfig = append(pluginConfig, map[string]any{"name": "QueueState", "args": map[string]any{"webhook": webhook}})
	}
	profile["pluginConfig"] = pluginConfig
	out, err := sigsyaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "scheduler-config.yaml")
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// grant is one verb on one resource that the manifest's roles give the ServiceAccount; Namespace is
// set for a Role's, Name for a rule limited to some objects (one of them).
type grant struct {
	Namespace, Group, Resource, Verb, Name string
}

func (g grant) String() string {
	where := "cluster-wide"
	if g.Namespace != "" {
		where = "in " + g.Namespace
	}
	return g.Verb + " " + g.Resource + "." + g.Group + " " + where
}

// grants lists, verb by verb, the rules of the ClusterRoles and Roles that the manifest defines and
// binds to the ServiceAccount (not the system roles it also binds).
func (m *installManifest) grants(t *testing.T) []grant {
	t.Helper()
	defined := map[string][]rbacv1.PolicyRule{}
	for _, obj := range m.objects {
		if obj.GetKind() == "ClusterRole" || obj.GetKind() == "Role" {
			var role rbacv1.Role
			fromUnstructured(t, obj, &role)
			defined[obj.GetKind()+"/"+obj.GetNamespace()+"/"+obj.GetName()] = role.Rules
		}
	}
	var out []grant
	for _, obj := range m.objects {
		if obj.GetKind() != "ClusterRoleBinding" && obj.GetKind() != "RoleBinding" {
			continue
		}
		var binding rbacv1.RoleBinding
		fromUnstructured(t, obj, &binding)
		if !bindsServiceAccount(binding.Subjects) {
			continue
		}
		roleNamespace := ""
		if binding.RoleRef.Kind == "Role" {
			roleNamespace = binding.Namespace
		}
		for _, rule := range defined[binding.RoleRef.Kind+"/"+roleNamespace+"/"+binding.RoleRef.Name] {
			for _, group := range rule.APIGroups {
				for _, resource := range rule.Resources {
					for _, verb := range rule.Verbs {
						g := grant{Namespace: binding.Namespace, Group: group, Resource: resource, Verb: verb}
						if len(rule.ResourceNames) > 0 {
							g.Name = rule.ResourceNames[0]
						}
						out = append(out, g)
					}
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("install.yaml grants the ServiceAccount no rule of its own")
	}
	return out
}

// waitGranted waits until the API server's authorizer allows the ServiceAccount every grant: RBAC
// authorizes from its own informers, so roles and bindings just applied are not in force at once, and
// a request of the binary made before would be forbidden.
func waitGranted(ctx context.Context, t *testing.T, grants []grant) {
	t.Helper()
	for _, g := range grants {
		resource, subresource, _ := strings.Cut(g.Resource, "/")
		review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:   userName,
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: g.Namespace, Verb: g.Verb, Group: g.Group,
				Resource: resource, Subresource: subresource, Name: g.Name},
		}}
		poll(ctx, t, "the authorizer allows "+g.String(), func(ctx context.Context) (bool, error) {
			got, err := cluster.Kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
			return err == nil && got.Status.Allowed, nil
		})
	}
}

func bindsServiceAccount(subjects []rbacv1.Subject) bool {
	for _, s := range subjects {
		if s.Kind == rbacv1.ServiceAccountKind && s.Namespace == namespace && s.Name == serviceAccount {
			return true
		}
	}
	return false
}

func fromUnstructured(t *testing.T, obj *unstructured.Unstructured, into any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, into); err != nil {
		t.Fatalf("%s %s: %v", obj.GetKind(), obj.GetName(), err)
	}
}

// applyServerSide applies the objects in order as kubectl apply --server-side does, with the
// cluster's administrator credentials.
func applyServerSide(ctx context.Context, t *testing.T, objects []*unstructured.Unstructured) {
	t.Helper()
	disc, err := discovery.NewDiscoveryClientForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
	dyn, err := dynamic.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objects {
		gvk := obj.GroupVersionKind()
		mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatalf("%s %s: %v", gvk.Kind, obj.GetName(), err)
		}
		_, err = dyn.Resource(mapping.Resource).Namespace(obj.GetNamespace()).Apply(ctx, obj.GetName(), obj,
			metav1.ApplyOptions{FieldManager: "kubectl", Force: true})
		if err != nil {
			t.Fatalf("apply %s %s: %v", gvk.Kind, obj.GetName(), err)
		}
	}
}
