package integration

import (
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"

	busv1alpha1 "github.com/queue-scheduler/queue-scheduler/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/controller"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// The CRD schemas reject bad objects with a message that names the field and the rule. Objects are
// sent as unstructured so that values the Go types cannot hold (an unknown state, a bad quantity)
// reach the API server too.
func TestCRDsRejectBadObjects(t *testing.T) {
	ns := newNamespace(t, "", nil)
	tests := []struct {
		name     string
		resource string
		object   map[string]any
		want     []string
		// wantNot must not be in the error: what people should not have to read.
		wantNot string
	}{
		{name: "weight 0", resource: "queues", object: queue("w0", map[string]any{"weight": 0}),
			want: []string{"spec.weight", "should be greater than or equal to 1"}},
		{name: "weight 70000", resource: "queues", object: queue("w70000", map[string]any{"weight": 70000}),
			want: []string{"spec.weight", "should be less than or equal to 65535"}},
		{name: "unknown state", resource: "queues", object: queue("paused", map[string]any{"state": "Paused"}),
			want: []string{"spec.state", `Unsupported value: "Paused"`, `"Open", "Closed", "Suspended"`}},
		{name: "state Closing is not for users", resource: "queues", object: queue("closing", map[string]any{"state": "Closing"}),
			want: []string{"spec.state", `Unsupported value: "Closing"`}},
		{name: "negative capability", resource: "queues", object: queue("neg-cap", map[string]any{"capability": map[string]any{"cpu": "-1"}}),
			want: []string{"spec.capability", `"-1" is not a quantity of at least 0 for cpu (examples: 8, 500m, 16Gi)`}},
		{name: "negative guarantee", resource: "queues", object: queue("neg-guar", map[string]any{"guarantee": map[string]any{"resource": map[string]any{"memory": "-1Gi"}}}),
			want: []string{"spec.guarantee.resource", `"-1Gi" is not a quantity of at least 0 for memory`}},
		{name: "flat guarantee, negative", resource: "queues", object: queue("neg-flat", map[string]any{"guarantee": map[string]any{"memory": "-1Gi"}}),
			want: []string{`spec.guarantee[memory]: Invalid value: "-1Gi": must be a quantity of at least 0 (examples: 8, 500m, 16Gi)`}},
		{name: "flat guarantee, no quantity", resource: "queues", object: queue("lots-flat", map[string]any{"guarantee": map[string]any{"cpu": "lots"}}),
			want: []string{`spec.guarantee[cpu]: Invalid value: "lots": must be a quantity of at least 0`}},
		{name: "guarantee in both forms", resource: "queues", object: queue("mixed", map[string]any{"guarantee": map[string]any{
			"resource": map[string]any{"cpu": "2"}, "memory": "1Gi"}}),
			want: []string{`spec.guarantee[memory]`, "write the guarantee in one form"}},
		{name: "bad quantity", resource: "queues", object: queue("eight", map[string]any{"capability": map[string]any{"cpu": "eight"}}),
			want: []string{"spec.capability", `"eight" is not a quantity of at least 0 for cpu (examples: 8, 500m, 16Gi)`}, wantNot: "should match"},
		{name: "own parent", resource: "queues", object: queue("selfish", map[string]any{"parent": "selfish"}),
			want: []string{"spec.parent must not name the queue itself"}},
		{name: "PodGroup minMember 0", resource: "podgroups", object: namespaced("PodGroup", ns, "pg0", map[string]any{"minMember": 0}),
			want: []string{"spec.minMember", "should be greater than or equal to 1"}},
		{name: "PodGroup negative minResources", resource: "podgroups", object: namespaced("PodGroup", ns, "pgneg", map[string]any{"minResources": map[string]any{"cpu": "-2"}}),
			want: []string{"spec.minResources", `"-2" is not a quantity of at least 0 for cpu`}},
		{name: "PodGroup negative minTaskMember", resource: "podgroups", object: namespaced("PodGroup", ns, "pgtask", map[string]any{"minTaskMember": map[string]any{"ps": -1}}),
			want: []string{"spec.minTaskMember", "task minimums must not be negative"}},
		{name: "PodGroup timeout 0", resource: "podgroups", object: namespaced("PodGroup", ns, "pgt", map[string]any{"scheduleTimeoutSeconds": 0}),
			want: []string{"spec.scheduleTimeoutSeconds", "should be greater than or equal to 1"}},
		{name: "QueueUnit without consumer kind", resource: "queueunits", object: namespaced("QueueUnit", ns, "qu", map[string]any{"consumerRef": map[string]any{"name": "job"}}),
			want: []string{"spec.consumerRef", "consumerRef needs kind and name"}},
		{name: "QueueUnit negative resource", resource: "queueunits", object: namespaced("QueueUnit", ns, "quneg", map[string]any{
			"consumerRef": map[string]any{"kind": "Job", "name": "job"}, "resource": map[string]any{"cpu": "-1"}}),
			want: []string{"spec.resource", "is not a quantity of at least 0 for"}},
		{name: "Command unknown action", resource: "commands", object: command(ns, "cmd", "PauseQueue", "team"),
			want: []string{"spec.action", `Unsupported value: "PauseQueue"`}},
		{name: "Command without target name", resource: "commands", object: command(ns, "cmd2", "OpenQueue", ""),
			want: []string{"spec.target.name"}},
	}
	client := dynamic.NewForConfigOrDie(cluster.Config)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gvr := groupVersion(tt.resource).WithResource(tt.resource)
			obj := &unstructured.Unstructured{Object: tt.object}
			var api dynamic.ResourceInterface = client.Resource(gvr)
			if obj.GetNamespace() != "" {
				api = client.Resource(gvr).Namespace(obj.GetNamespace())
			}
			_, err := api.Create(context.Background(), obj, metav1.CreateOptions{})
			if !apierrors.IsInvalid(err) {
				t.Fatalf("create: got %v, want an Invalid error", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err.Error(), w)
				}
			}
			if tt.wantNot != "" && strings.Contains(err.Error(), tt.wantNot) {
				t.Errorf("error %q contains %q", err.Error(), tt.wantNot)
			}
			if _, err := api.Get(context.Background(), obj.GetName(), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("rejected object was stored: get returned %v", err)
			}
		})
	}
}

// A guarantee is taken in capability's form too, with strict field validation as kubectl sends it,
// read as one value, kept in its owner's form by a typed update, and judged by the tree's rules.
func TestQueueGuaranteeFlatForm(t *testing.T) {
	ctx := context.Background()
	api := dynamic.NewForConfigOrDie(cluster.Config).Resource(schedulingv1beta1.SchemeGroupVersion.WithResource("queues"))
	strict := metav1.CreateOptions{FieldValidation: metav1.FieldValidationStrict}
	parent := &unstructured.Unstructured{Object: queue("flat-parent", map[string]any{
		"capability": map[string]any{"cpu": "16"}, "guarantee": map[string]any{"cpu": "8", "memory": "16Gi"}})}
	if _, err := api.Create(ctx, parent, strict); err != nil {
		t.Fatalf("create a queue with a flat guarantee: %v", err)
	}
	t.Cleanup(func() { _ = api.Delete(ctx, "flat-parent", metav1.DeleteOptions{}) })
	typed := cluster.Queues.SchedulingV1beta1().Queues()
	q, err := typed.Get(ctx, "flat-parent", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cpu := q.Spec.Guarantee.Resource[v1.ResourceCPU]; cpu.String() != "8" || !q.Spec.Guarantee.Form.Flat {
		t.Fatalf("read back: guarantee %v, flat %t; want cpu 8, flat", q.Spec.Guarantee.Resource, q.Spec.Guarantee.Form.Flat)
	}
	// The controller writes the status beside this update: take the latest on a conflict.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		q, err := typed.Get(ctx, "flat-parent", metav1.GetOptions{})
		if err != nil {
			return err
		}
		q.Spec.Weight = 2
		_, err = typed.Update(ctx, q, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	stored, err := api.Get(ctx, "flat-parent", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cpu, _, _ := unstructured.NestedString(stored.Object, "spec", "guarantee", "cpu"); cpu != "8" {
		t.Errorf("after a typed update the guarantee reads %v, want the flat form its owner wrote", stored.Object["spec"])
	}
	child := &unstructured.Unstructured{Object: queue("flat-child", map[string]any{
		"parent": "flat-parent", "capability": map[string]any{"cpu": "16"}, "guarantee": map[string]any{"cpu": "9"}})}
	_, err = api.Create(ctx, child, strict)
	if want := `spec.guarantee[cpu]: Invalid value: "9": the guarantees of parent queue "flat-parent"'s children would sum to 9, above its own guarantee 8`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a child above its parent's flat guarantee: got %v, want %q", err, want)
	}
}

// Defaults fill in what a minimal queue leaves out.
func TestQueueDefaults(t *testing.T) {
	createQueue(t, util.MakeQueue("defaults").Obj())
	q, err := cluster.Queues.SchedulingV1beta1().Queues().Get(context.Background(), "defaults", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if q.Spec.Weight != 1 || q.Spec.State != schedulingv1beta1.QueueStateOpen || q.Spec.Reclaimable == nil || !*q.Spec.Reclaimable {
		t.Errorf("defaults: got weight %d, state %q, reclaimable %v; want 1, Open, true", q.Spec.Weight, q.Spec.State, q.Spec.Reclaimable)
	}
}

// Updates are checked too: a rejected update leaves the stored queue as it was.
func TestQueueUpdateRejectedLeavesQueueUnchanged(t *testing.T) {
	createQueue(t, util.MakeQueue("keep").Weight(3).Capability(map[v1.ResourceName]string{v1.ResourceCPU: "8"}).Obj())
	api := cluster.Queues.SchedulingV1beta1().Queues()
	patch := []byte(`{"spec":{"weight":0,"capability":{"cpu":"-8"}}}`)
	if _, err := api.Patch(context.Background(), "keep", types.MergePatchType, patch, metav1.PatchOptions{}); !apierrors.IsInvalid(err) {
		t.Fatalf("update: got %v, want an Invalid error", err)
	}
	stored, err := api.Get(context.Background(), "keep", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if stored.Spec.Weight != 3 || stored.Spec.Capability.Cpu().String() != "8" {
		t.Errorf("stored queue changed: weight %d, cpu %s", stored.Spec.Weight, stored.Spec.Capability.Cpu())
	}
}

func groupVersion(resource string) schema.GroupVersion {
	if resource == "commands" {
		return busv1alpha1.SchemeGroupVersion
	}
	return schedulingv1beta1.SchemeGroupVersion
}

func queue(name string, spec map[string]any) map[string]any {
	return map[string]any{
		"apiVersion": schedulingv1beta1.SchemeGroupVersion.String(), "kind": "Queue",
		"metadata": map[string]any{"name": name}, "spec": spec,
	}
}

func namespaced(kind, namespace, name string, spec map[string]any) map[string]any {
	return map[string]any{
		"apiVersion": schedulingv1beta1.SchemeGroupVersion.String(), "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": namespace}, "spec": spec,
	}
}

func command(namespace, name, action, target string) map[string]any {
	return map[string]any{
		"apiVersion": busv1alpha1.SchemeGroupVersion.String(), "kind": "Command",
		"metadata": map[string]any{"name": name, "namespace": namespace},
		"spec":     map[string]any{"action": action, "target": map[string]any{"name": target}},
	}
}

// A flat guarantee entry that is not a quantity, in a queue that came past the webhook, is kept as
// written and guarantees nothing; the queue's condition GuaranteeRejected says which entry and why,
// for describe to show, until the entry is mended.
func TestQueuePastTheWebhookShowsItsRejectedGuarantee(t *testing.T) {
	ctx := context.Background()
	api := dynamic.NewForConfigOrDie(cluster.Config).Resource(schedulingv1beta1.SchemeGroupVersion.WithResource("queues"))
	withoutAdmission(t, func() {
		q := &unstructured.Unstructured{Object: queue("flat-lots", map[string]any{"guarantee": map[string]any{"cpu": "lots", "memory": "1Gi"}})}
		if _, err := api.Create(ctx, q, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create past the webhook: %v", err)
		}
	})
	t.Cleanup(func() { _ = api.Delete(ctx, "flat-lots", metav1.DeleteOptions{}) })
	typed := cluster.Queues.SchedulingV1beta1().Queues()
	const want = `spec.guarantee[cpu]: Invalid value: "lots": must be a quantity of at least 0 (examples: 8, 500m, 16Gi); nothing is guaranteed for these entries until they are mended`
	var last *schedulingv1beta1.Queue
	if err := wait.PollUntilContextTimeout(ctx, util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		q, err := typed.Get(ctx, "flat-lots", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = q
		c := meta.FindStatusCondition(q.Status.Conditions, controller.QueueGuaranteeRejected)
		return c != nil && c.Status == metav1.ConditionTrue && c.Message == want, nil
	}); err != nil {
		t.Fatalf("the queue never said which guarantee entry it rejected: conditions %+v", last.Status.Conditions)
	}
	if mem := last.Spec.Guarantee.Resource[v1.ResourceMemory]; mem.String() != "1Gi" || len(last.Spec.Guarantee.Resource) != 1 {
		t.Errorf("guarantee taken: %v, want memory 1Gi alone", last.Spec.Guarantee.Resource)
	}
	if out, err := util.KubectlQueue(ctx, cluster.Kubeconfig, "describe", "flat-lots"); err != nil || !strings.Contains(out, "GuaranteeRejected") {
		t.Errorf("kubectl queue describe: %v\n%s\nwant the GuaranteeRejected condition", err, out)
	}
	if _, err := typed.Patch(ctx, "flat-lots", types.MergePatchType, []byte(`{"spec":{"guarantee":{"cpu":"2"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		q, err := typed.Get(ctx, "flat-lots", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = q
		return meta.FindStatusCondition(q.Status.Conditions, controller.QueueGuaranteeRejected) == nil, nil
	}); err != nil {
		t.Fatalf("the condition stayed once the entry was mended: %+v", last.Status.Conditions)
	}
}
