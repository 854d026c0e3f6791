package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	yamlutil "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/utils/ptr"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/holdreport"
	"github.com/queue-scheduler/queue-scheduler/pkg/localcluster"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

const (
	examplesDir      = "../../examples"
	gettingStarted   = "../../docs/getting-started.md"
	administratorTag = "a cluster administrator"
)

// exampleStep applies one file of examples/ as the user its header names, then checks what the
// docs say follows.
type exampleStep struct {
	file string
	// before runs first (a CRD the example needs, as the cluster of its header has it).
	before func(t *testing.T)
	then   func(t *testing.T)
}

// exampleSteps are every example, in the order of docs/getting-started.md and the READMEs'.
var exampleSteps = []exampleStep{
	{file: "getting-started/team.yaml", then: func(t *testing.T) { waitTeam(t, "team-a", "alice") }},
	{file: "getting-started/job.yaml", then: func(t *testing.T) { waitJobBound(t, "team-a", "hello", 3) }},
	{file: "getting-started/gang.yaml", then: func(t *testing.T) { waitJobBound(t, "team-a", "trainer", 4) }},
	{file: "getting-started/queued-job.yaml", then: func(t *testing.T) {
		waitUnit(t, "team-a", "sweep", "Dequeued", isDequeued)
		waitJobBound(t, "team-a", "sweep", 2)
	}},
	{file: "getting-started/night-run.yaml",
		before: func(t *testing.T) { kubectlQueue(t, "suspend", "team-a", "--namespace", "team-a", "--wait") },
		then: func(t *testing.T) {
			pods := waitJobPods(t, "team-a", "night-run", 2)
			err := util.WaitForPods(context.Background(), cluster.Kube, "team-a", pods, settle, "held by the Suspended queue", func(p *v1.Pod) bool {
				c := util.PodScheduledCondition(p)
				return !util.IsBound(p) && c != nil && c.Reason == holdreport.QueueSuspended && c.Message == `queue "team-a" is Suspended: no new resources are allocated`
			})
			if err != nil {
				t.Fatal(err)
			}
			kubectlQueue(t, "resume", "team-a", "--namespace", "team-a", "--wait")
			waitBound(t, "team-a", pods)
		}},
	{file: "queueunit/setup.yaml", then: func(t *testing.T) {
		waitTeam(t, "research", "rita")
		waitAllowed(t, "rita", authorizationv1.ResourceAttributes{Namespace: "research", Verb: "patch", Group: "kubeflow.org", Resource: "pytorchjobs"})
	}},
	{file: "queueunit/batch-job.yaml", then: func(t *testing.T) {
		waitUnit(t, "research", "resnet-sweep", "Dequeued", isDequeued)
		waitJobBound(t, "research", "resnet-sweep", 4)
		waitQueue(t, "research", "holding the example's pods", func(q *schedulingv1beta1.Queue) bool {
			return q.Status.Allocated.Cpu().Value() == 8 && q.Status.Dequeued == 1
		})
	}},
	{file: "queueunit/pytorchjob.yaml", before: installPyTorchJobCRD, then: func(t *testing.T) {
		waitUnit(t, "research", "bert-finetune", "Dequeued", isDequeued)
		waitUnsuspended(t, schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "pytorchjobs"},
			"research", "bert-finetune", "spec", "runPolicy", "suspend")
	}},
}

// Every example under examples/ (but the queuesim scenarios, which pkg/queuesim's tests load and
// the benchmarks play), applied in order as the user its header names, on an API server that
// authorizes with RBAC and the shipped roles: each job runs, or waits with the reason the docs say.
func TestExamples(t *testing.T) {
	util.RunJobController(t, cluster.Kube)
	applier := newApplier(t)
	var files []string
	for _, step := range exampleSteps {
		files = append(files, step.file)
	}
	if missing := untestedExamples(t, files); len(missing) > 0 {
		t.Fatalf("examples with no step in exampleSteps: %v", missing)
	}
	for _, step := range exampleSteps {
		if !t.Run(step.file, func(t *testing.T) {
			if step.before != nil {
				step.before(t)
			}
			applier.apply(t, filepath.Join(examplesDir, step.file))
			step.then(t)
		}) {
			return
		}
	}
}

// untestedExamples lists the YAML files under examples/, but the scenarios, that files leave out.
func untestedExamples(t *testing.T, files []string) []string {
	t.Helper()
	var missing []string
	err := filepath.WalkDir(examplesDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || (filepath.Ext(path) != ".yaml" && filepath.Ext(path) != ".yml") {
			return err
		}
		rel, err := filepath.Rel(examplesDir, path)
		if err == nil && !strings.HasPrefix(rel, "scenarios/") && !slices.Contains(files, rel) {
			missing = append(missing, rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return missing
}

// Every YAML block of docs/getting-started.md is a whole file of examples/getting-started (so that
// TestExamples runs what the page shows), every file there is shown, and every file a command of
// the page or the README applies exists.
func TestGettingStartedShowsTheExamples(t *testing.T) {
	page, err := os.ReadFile(gettingStarted)
	if err != nil {
		t.Fatal(err)
	}
	shown := map[string]bool{}
	for _, block := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(page), -1) {
		first, _, _ := strings.Cut(block[1], "\n")
		file, _, _ := strings.Cut(strings.TrimPrefix(first, "# examples/"), " ")
		want, err := os.ReadFile(filepath.Join(examplesDir, file))
		if err != nil || string(want) != block[1] {
			t.Errorf("a YAML block of the page is not examples/%s as it stands (%v):\n%s", file, err, block[1])
		}
		shown[file] = true
	}
	files, err := filepath.Glob(filepath.Join(examplesDir, "getting-started", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if rel, _ := filepath.Rel(examplesDir, f); !shown[rel] {
			t.Errorf("the page does not show examples/%s", rel)
		}
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`-f (examples/[\w./-]+\.yaml)`).FindAllStringSubmatch(string(page)+string(readme), -1) {
		if _, err := os.Stat(filepath.Join("../..", m[1])); err != nil {
			t.Errorf("the docs apply %s: %v", m[1], err)
		}
	}
}

// applier applies manifests as a user, with server-side apply, as `kubectl apply --server-side`
// does, and deletes what it applied when the test ends.
type applier struct {
	mapper meta.ResettableRESTMapper
	// applied are the objects applied, with how to reach each, in order.
	applied []appliedObject
}

type appliedObject struct {
	obj      *unstructured.Unstructured
	resource func(dynamic.Interface) dynamic.ResourceInterface
}

func newApplier(t *testing.T) *applier {
	t.Helper()
	client, err := discovery.NewDiscoveryClientForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	a := &applier{mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(client))}
	t.Cleanup(a.deleteAll)
	return a
}

// deleteAll deletes what was applied, last first, and the pods of its namespaces: no garbage
// collector runs here to delete a Job's pods.
func (a *applier) deleteAll() {
	ctx, admin := context.Background(), dynamic.NewForConfigOrDie(cluster.Config)
	for i := len(a.applied) - 1; i >= 0; i-- {
		o := a.applied[i]
		if o.obj.GetKind() == "Namespace" {
			_ = cluster.Kube.CoreV1().Pods(o.obj.GetName()).DeleteCollection(ctx, *metav1.NewDeleteOptions(0), metav1.ListOptions{})
		}
		_ = o.resource(admin).Delete(ctx, o.obj.GetName(), metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)})
	}
}

// exampleUser reads who applies an example from its header: "applied by a cluster administrator"
// (""), or "applied by NAME".
var exampleUser = regexp.MustCompile(`applied by (` + administratorTag + `|[a-z]+)\b`)

// apply applies every document of the file as the user its header names.
func (a *applier) apply(t *testing.T, path string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := exampleUser.FindSubmatch(raw)
	if m == nil {
		t.Fatalf("%s does not say who applies it (applied by …)", path)
	}
	cfg := rest.CopyConfig(cluster.Config)
	if user := string(m[1]); user != administratorTag {
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	}
	as, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	decoder := yamlutil.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := decoder.Decode(&obj.Object); errors.Is(err, io.EOF) {
			return
		} else if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(obj.Object) == 0 {
			continue
		}
		resource := a.resource(t, obj)
		data, err := json.Marshal(obj.Object)
		if err != nil {
			t.Fatal(err)
		}
		_, err = resource(as).Apply(context.Background(), obj.GetName(), obj, metav1.ApplyOptions{FieldManager: "kubectl", Force: true})
		if err != nil {
			t.Fatalf("%s as %s: apply %s %s: %v\n%s", path, m[1], obj.GetKind(), obj.GetName(), err, data)
		}
		a.applied = append(a.applied, appliedObject{obj: obj, resource: resource})
	}
}

// resource returns how a client reaches obj's resource.
func (a *applier) resource(t *testing.T, obj *unstructured.Unstructured) func(dynamic.Interface) dynamic.ResourceInterface {
	t.Helper()
	gvk := obj.GroupVersionKind()
	var mapping *meta.RESTMapping
	// A kind whose CRD was installed a moment ago is served by discovery a moment later.
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(context.Context) (bool, error) {
		var err error
		if mapping, err = a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			a.mapper.Reset()
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("%s %s: not served by the API server within %s", gvk, obj.GetName(), settle)
	}
	return func(c dynamic.Interface) dynamic.ResourceInterface {
		if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			return c.Resource(mapping.Resource).Namespace(obj.GetNamespace())
		}
		return c.Resource(mapping.Resource)
	}
}

// waitTeam waits until the team's queue (named as its namespace) is Open and the member's rights
// are in force (the authorizer learns new bindings a moment after they are stored).
func waitTeam(t *testing.T, team, member string) {
	t.Helper()
	waitQueue(t, team, "Open", func(q *schedulingv1beta1.Queue) bool { return q.Status.State == schedulingv1beta1.QueueStateOpen })
	waitAllowed(t, member, authorizationv1.ResourceAttributes{Namespace: team, Verb: "patch", Group: "batch", Resource: "jobs"})
	waitAllowed(t, member, authorizationv1.ResourceAttributes{Verb: "list", Group: schedulingv1beta1.GroupName, Resource: "queues"})
}

// waitJobBound waits until the Job has count pods, all on nodes.
func waitJobBound(t *testing.T, namespace, job string, count int) {
	t.Helper()
	waitBound(t, namespace, waitJobPods(t, namespace, job, count))
}

// waitUnsuspended waits until the object's suspend switch at field is off.
func waitUnsuspended(t *testing.T, gvr schema.GroupVersionResource, namespace, name string, field ...string) {
	t.Helper()
	client := dynamic.NewForConfigOrDie(cluster.Config).Resource(gvr).Namespace(namespace)
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		obj, err := client.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		suspended, _, _ := unstructured.NestedBool(obj.Object, field...)
		return !suspended, nil
	})
	if err != nil {
		t.Fatalf("%s %s/%s still suspended after %s", gvr.Resource, namespace, name, settle)
	}
}

// trainingOperator is the Kubeflow training operator whose PyTorchJob CRD the PyTorchJob example
// needs, fetched as a Go module (its archive carries the CRDs).
const trainingOperator = "github.com/kubeflow/training-operator@v1.8.1"

// installPyTorchJobCRD installs the training operator's PyTorchJob CRD, as the cluster the example
// names has it.
func installPyTorchJobCRD(t *testing.T) {
	t.Helper()
	cmd := exec.Command("go", "mod", "download", "-json", trainingOperator)
	// Outside any module: the user's module flags (-mod=vendor) do not apply to it.
	cmd.Dir, cmd.Env = t.TempDir(), append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod download %s: %v\n%s", trainingOperator, err, out)
	}
	var module struct{ Dir string }
	if err := json.Unmarshal(out, &module); err != nil || module.Dir == "" {
		t.Fatalf("go mod download %s: no directory in %s (%v)", trainingOperator, out, err)
	}
	crds := os.DirFS(filepath.Join(module.Dir, "manifests", "base", "crds"))
	if err := localcluster.InstallCRDsFrom(context.Background(), cluster.Config, crds, "kubeflow.org_pytorchjobs.yaml"); err != nil {
		t.Fatalf("install the PyTorchJob CRD: %v", err)
	}
}

// kubectlQueue runs `kubectl queue args…` as the cluster administrator.
func kubectlQueue(t *testing.T, args ...string) {
	t.Helper()
	if out, err := util.KubectlQueue(context.Background(), cluster.Kubeconfig, args...); err != nil {
		t.Fatalf("kubectl queue %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
