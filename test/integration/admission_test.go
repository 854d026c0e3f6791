package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	busv1alpha1 "github.com/queue-scheduler/queue-scheduler/apis/bus/v1alpha1"
	"github.com/queue-scheduler/queue-scheduler/apis/config"
	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// admissionFixture is the queue tree the admission tests submit to:
//
//	adm-parent (cpu capability 10, guarantee 6) ── adm-leaf-a (guarantee 4), adm-leaf-b
//	adm-closed (Closed), adm-closing (Closed with a live pod), adm-suspended (Suspended)
//	adm-busy (holds a PodGroup)
type admissionFixture struct {
	ns string
}

func setUpAdmission(t *testing.T) admissionFixture {
	t.Helper()
	cpu := func(q string) map[v1.ResourceName]string { return map[v1.ResourceName]string{v1.ResourceCPU: q} }
	createQueue(t, util.MakeQueue("adm-parent").Capability(cpu("10")).Guarantee(cpu("6")).Obj())
	createQueue(t, util.MakeQueue("adm-leaf-a").Parent("adm-parent").Capability(cpu("10")).Guarantee(cpu("4")).Obj())
	createQueue(t, util.MakeQueue("adm-leaf-b").Parent("adm-parent").Capability(cpu("8")).Obj())
	createQueue(t, util.MakeQueue("adm-closed").State(schedulingv1beta1.QueueStateClosed).Obj())
	createQueue(t, util.MakeQueue("adm-suspended").State(schedulingv1beta1.QueueStateSuspended).Obj())
	createQueue(t, util.MakeQueue("adm-busy").Obj())
	f := admissionFixture{ns: newNamespace(t, "", nil)}
	queueInState(t, "adm-closing", f.ns, schedulingv1beta1.QueueStateClosing)
	if _, err := cluster.Queues.SchedulingV1beta1().PodGroups(f.ns).Create(context.Background(),
		util.MakePodGroup(f.ns, "busy-group").Queue("adm-busy").Obj(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createQueue(t, util.MakeQueue("adm-closed-parent").State(schedulingv1beta1.QueueStateClosed).Obj())
	createQueue(t, util.MakeQueue("adm-closed-child").Parent("adm-closed-parent").State(schedulingv1beta1.QueueStateClosed).Obj())
	queueInState(t, "adm-unknown", f.ns, schedulingv1beta1.QueueStateUnknown)
	waitStatusState(t, "adm-closed", schedulingv1beta1.QueueStateClosed)
	waitStatusState(t, "adm-closed-parent", schedulingv1beta1.QueueStateClosed)
	return f
}

// badRequest is one request that admission must refuse; check says nothing stored changed.
type badRequest struct {
	name  string
	send  func(f admissionFixture) error
	want  []string
	check func(t *testing.T, f admissionFixture)
}

func queues() interface {
	Create(context.Context, *schedulingv1beta1.Queue, metav1.CreateOptions) (*schedulingv1beta1.Queue, error)
	Get(context.Context, string, metav1.GetOptions) (*schedulingv1beta1.Queue, error)
	Patch(context.Context, string, types.PatchType, []byte, metav1.PatchOptions, ...string) (*schedulingv1beta1.Queue, error)
	Delete(context.Context, string, metav1.DeleteOptions) error
} {
	return cluster.Queues.SchedulingV1beta1().Queues()
}

func createQueueErr(q *schedulingv1beta1.Queue) func(admissionFixture) error {
	return func(admissionFixture) error {
		_, err := queues().Create(context.Background(), q, metav1.CreateOptions{})
		return err
	}
}

func patchQueueErr(name, patch string) func(admissionFixture) error {
	return func(admissionFixture) error {
		_, err := queues().Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		return err
	}
}

func deleteQueueErr(name string) func(admissionFixture) error {
	return func(admissionFixture) error {
		return queues().Delete(context.Background(), name, metav1.DeleteOptions{})
	}
}

func createPodGroupErr(name, queue string) func(admissionFixture) error {
	return func(f admissionFixture) error {
		_, err := cluster.Queues.SchedulingV1beta1().PodGroups(f.ns).Create(context.Background(), util.MakePodGroup(f.ns, name).Queue(queue).Obj(), metav1.CreateOptions{})
		return err
	}
}

func createQueueUnitErr(name, queue string) func(admissionFixture) error {
	return func(f admissionFixture) error {
		_, err := cluster.Queues.SchedulingV1beta1().QueueUnits(f.ns).Create(context.Background(), queueUnit(f.ns, name, queue), metav1.CreateOptions{})
		return err
	}
}

func queueUnit(namespace, name, queue string) *schedulingv1beta1.QueueUnit {
	return &schedulingv1beta1.QueueUnit{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: schedulingv1beta1.QueueUnitSpec{
			ConsumerRef: v1.ObjectReference{APIVersion: "batch/v1", Kind: "Job", Name: name},
			Queue:       queue, Priority: ptr.To[int32](1),
			Resource: util.ResourceList(map[v1.ResourceName]string{v1.ResourceCPU: "2"}),
		},
	}
}

func createPodErr(name string, labels map[string]string) func(admissionFixture) error {
	return func(f admissionFixture) error {
		pod := util.MakePod(f.ns, name).Labels(labels).Obj()
		_, err := cluster.Kube.CoreV1().Pods(f.ns).Create(context.Background(), pod, metav1.CreateOptions{})
		return err
	}
}

// queueUnchanged checks that a rejected update or delete left the queue's spec as it was.
func queueUnchanged(name string, spec *schedulingv1beta1.QueueSpec) func(*testing.T, admissionFixture) {
	return func(t *testing.T, _ admissionFixture) {
		if got := getQueue(t, name); !apiequality.Semantic.DeepEqual(got.Spec, *spec) {
			t.Errorf("queue %s changed: %+v, want %+v", name, got.Spec, *spec)
		}
	}
}

func queueAbsent(name string) func(*testing.T, admissionFixture) {
	return func(t *testing.T, _ admissionFixture) {
		if _, err := cluster.Queues.SchedulingV1beta1().Queues().Get(context.Background(), name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("rejected queue %s was stored: %v", name, err)
		}
	}
}

func podAbsent(name string) func(*testing.T, admissionFixture) {
	return func(t *testing.T, f admissionFixture) {
		if _, err := cluster.Kube.CoreV1().Pods(f.ns).Get(context.Background(), name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("rejected pod %s was stored: %v", name, err)
		}
	}
}

func deepChain(prefix string, depth int) []*schedulingv1beta1.Queue {
	chain := make([]*schedulingv1beta1.Queue, 0, depth)
	parent := ""
	for i := range depth {
		name := fmt.Sprintf("%s-%d", prefix, i)
		chain = append(chain, util.MakeQueue(name).Parent(parent).Obj())
		parent = name
	}
	return chain
}

func badRequests(t *testing.T) []badRequest {
	specOf := func(name string) *schedulingv1beta1.QueueSpec { q := getQueue(t, name); return &q.Spec }
	cpu := func(q string) map[v1.ResourceName]string { return map[v1.ResourceName]string{v1.ResourceCPU: q} }
	qLabel := func(q string) map[string]string { return map[string]string{schedulingv1beta1.QueueLabel: q} }
	return []badRequest{
		{name: "queue with a missing parent", send: createQueueErr(util.MakeQueue("adm-x1").Parent("adm-nope").Obj()),
			want: []string{"spec.parent", "Not found", "adm-nope"}, check: queueAbsent("adm-x1")},
		{name: "queue above its parent's capability", send: createQueueErr(util.MakeQueue("adm-x2").Parent("adm-parent").Capability(cpu("12")).Obj()),
			want: []string{"spec.capability[cpu]", `exceeds parent queue "adm-parent"'s capability 10`}, check: queueAbsent("adm-x2")},
		{name: "queue without a limit its parent has", send: createQueueErr(util.MakeQueue("adm-x3").Parent("adm-parent").Obj()),
			want: []string{"spec.capability[cpu]", "Required value", "the child must limit it too"}, check: queueAbsent("adm-x3")},
		{name: "children's guarantees above the parent's", send: createQueueErr(util.MakeQueue("adm-x4").Parent("adm-parent").Capability(cpu("10")).Guarantee(cpu("3")).Obj()),
			want: []string{"spec.guarantee.resource[cpu]", "would sum to 7, above its own guarantee 6"}, check: queueAbsent("adm-x4")},
		{name: "guarantee above capability", send: createQueueErr(util.MakeQueue("adm-x5").Capability(cpu("2")).Guarantee(cpu("3")).Obj()),
			want: []string{"spec.guarantee.resource[cpu]", "must not exceed spec.capability[cpu] (2)"}, check: queueAbsent("adm-x5")},
		{name: "child of a queue that holds work", send: createQueueErr(util.MakeQueue("adm-x6").Parent("adm-busy").Obj()),
			want: []string{"spec.parent", `queue "adm-busy" holds work (PodGroups, QueueUnits or pods)`}, check: queueAbsent("adm-x6")},
		{name: "Open child created under a Closed parent", send: createQueueErr(util.MakeQueue("adm-x7").Parent("adm-closed-parent").Obj()),
			want: []string{"spec.state", `parent queue "adm-closed-parent" is Closed: a queue placed under it must have spec.state Closed, not Open`}, check: queueAbsent("adm-x7")},
		{name: "Open queue moved under a Closed parent", send: patchQueueErr("adm-suspended", `{"spec":{"parent":"adm-closed-parent"}}`),
			want: []string{"spec.state", `parent queue "adm-closed-parent" is Closed`}, check: queueUnchanged("adm-suspended", specOf("adm-suspended"))},
		{name: "parent's capability lowered below a child's", send: patchQueueErr("adm-parent", `{"spec":{"capability":{"cpu":"9"}}}`),
			want: []string{"spec.capability[cpu]", `is below child queue "adm-leaf-a"'s capability (10)`}, check: queueUnchanged("adm-parent", specOf("adm-parent"))},
		{name: "parent's guarantee lowered below its children's sum", send: patchQueueErr("adm-parent", `{"spec":{"guarantee":{"resource":{"cpu":"3"}}}}`),
			want: []string{"spec.guarantee.resource[cpu]", "is below the sum of the children's guarantees (4)"}, check: queueUnchanged("adm-parent", specOf("adm-parent"))},
		{name: "subtree moved too deep", send: func(admissionFixture) error {
			chain := deepChain("adm-chain", 7)
			for _, q := range chain {
				createQueue(t, q)
			}
			createQueue(t, util.MakeQueue("adm-sub").Obj())
			createQueue(t, util.MakeQueue("adm-sub-1").Parent("adm-sub").Obj())
			createQueue(t, util.MakeQueue("adm-sub-2").Parent("adm-sub-1").Obj())
			_, err := queues().Patch(context.Background(), "adm-sub", types.MergePatchType,
				[]byte(`{"spec":{"parent":"`+chain[len(chain)-1].Name+`"}}`), metav1.PatchOptions{})
			return err
		}, want: []string{"spec.parent", "puts the deepest queue of its subtree 10 levels below the root; at most 8 are allowed"}, check: func(t *testing.T, _ admissionFixture) {
			if got := getQueue(t, "adm-sub").Spec.Parent; got != "" {
				t.Errorf("queue adm-sub moved under %q", got)
			}
		}},
		{name: "queue parented to itself through a cycle", send: patchQueueErr("adm-parent", `{"spec":{"parent":"adm-leaf-a"}}`),
			want: []string{"spec.parent", "makes a cycle: adm-parent -> adm-leaf-a -> adm-parent"}, check: queueUnchanged("adm-parent", specOf("adm-parent"))},
		{name: "suspending a Closed queue", send: patchQueueErr("adm-closed", `{"spec":{"state":"Suspended"}}`),
			want: []string{"spec.state", `queue "adm-closed" is Closed: only Open leaves Closed`}, check: queueUnchanged("adm-closed", specOf("adm-closed"))},
		{name: "opening a child of a Closed parent", send: patchQueueErr("adm-closed-child", `{"spec":{"state":"Open"}}`),
			want: []string{"spec.state", `parent queue "adm-closed-parent" is Closed: a child cannot be opened`}, check: queueUnchanged("adm-closed-child", specOf("adm-closed-child"))},
		{name: "pod for an Unknown queue", send: createPodErr("p5", qLabel("adm-unknown")),
			want: []string{`queue "adm-unknown" is Unknown: its parent queue "missing-adm-unknown" does not exist`}, check: podAbsent("p5")},
		{name: "deleting an Open queue", send: deleteQueueErr("adm-busy"),
			want: []string{"metadata.name", `queue "adm-busy" is Open: close it first`}, check: queueUnchanged("adm-busy", specOf("adm-busy"))},
		{name: "deleting a Closing queue", send: deleteQueueErr("adm-closing"),
			want: []string{`queue "adm-closing" is Closing: close it first`}, check: queueUnchanged("adm-closing", specOf("adm-closing"))},
		{name: "deleting the default queue", send: deleteQueueErr("default"),
			want: []string{`queue "default" cannot be deleted`}, check: queueUnchanged("default", specOf("default"))},
		{name: "deleting the root queue", send: deleteQueueErr("root"),
			want: []string{`queue "root" cannot be deleted`}, check: queueUnchanged("root", specOf("root"))},
		{name: "deleting a queue with children", send: deleteQueueErr("adm-parent"),
			want: []string{`queue "adm-parent" has child queues`}, check: queueUnchanged("adm-parent", specOf("adm-parent"))},
		{name: "PodGroup for a Closed queue", send: createPodGroupErr("pg1", "adm-closed"),
			want: []string{"spec.queue", `queue "adm-closed" is Closed: it accepts no new work`}},
		{name: "PodGroup for a Closing queue", send: createPodGroupErr("pg2", "adm-closing"),
			want: []string{"spec.queue", `queue "adm-closing" is Closing: it accepts no new work`}},
		{name: "PodGroup for a missing queue", send: createPodGroupErr("pg3", "adm-nope"),
			want: []string{"spec.queue", "Not found", "adm-nope"}},
		{name: "PodGroup for a queue with children", send: createPodGroupErr("pg4", "adm-parent"),
			want: []string{"spec.queue", `queue "adm-parent" has child queues: only leaf queues take work`}},
		{name: "PodGroup for the root", send: createPodGroupErr("pg5", "root"),
			want: []string{"spec.queue", `queue "root" is the root of the queue hierarchy`}},
		{name: "QueueUnit for a Closing queue", send: createQueueUnitErr("qu1", "adm-closing"),
			want: []string{"spec.queue", `queue "adm-closing" is Closing`}},
		{name: "QueueUnit for a Closed queue", send: createQueueUnitErr("qu2", "adm-closed"),
			want: []string{"spec.queue", `queue "adm-closed" is Closed`}},
		{name: "Command for a missing queue", send: func(f admissionFixture) error {
			cmd := &busv1alpha1.Command{ObjectMeta: metav1.ObjectMeta{Name: "c1", Namespace: f.ns},
				Spec: busv1alpha1.CommandSpec{Action: busv1alpha1.CloseQueue, Target: busv1alpha1.Target{Name: "adm-nope"}}}
			_, err := cluster.Queues.BusV1alpha1().Commands(f.ns).Create(context.Background(), cmd, metav1.CreateOptions{})
			return err
		}, want: []string{"spec.target.name", "Not found", "adm-nope"}},
		{name: "pod for a Closing queue", send: createPodErr("p1", qLabel("adm-closing")),
			want: []string{"metadata.labels[scheduling.queue-scheduler.io/queue]", `queue "adm-closing" is Closing`}, check: podAbsent("p1")},
		{name: "pod for a missing queue", send: createPodErr("p2", qLabel("adm-nope")),
			want: []string{"metadata.labels[scheduling.queue-scheduler.io/queue]", "Not found"}, check: podAbsent("p2")},
		{name: "pod for a queue with children", send: createPodErr("p3", qLabel("adm-parent")),
			want: []string{`queue "adm-parent" has child queues`}, check: podAbsent("p3")},
		{name: "pod for a Closed queue through its namespace", send: func(f admissionFixture) error {
			ns := newNamespace(t, "closed", map[string]string{schedulingv1beta1.QueueAnnotation: "adm-closed"})
			waitNamespaceSeen(t, ns)
			pod := util.MakePod(ns, "p4").Obj()
			_, err := cluster.Kube.CoreV1().Pods(ns).Create(context.Background(), pod, metav1.CreateOptions{})
			return err
		}, want: []string{"metadata.labels[scheduling.queue-scheduler.io/queue]", `queue "adm-closed" is Closed`}},
		{name: "queue deeper than the limit", send: func(admissionFixture) error {
			for _, q := range deepChain("adm-deep", 10) {
				if _, err := queues().Create(context.Background(), q, metav1.CreateOptions{}); err != nil {
					return err
				}
				t.Cleanup(func() { _ = queues().Delete(context.Background(), q.Name, metav1.DeleteOptions{}) })
			}
			return nil
		}, want: []string{"spec.parent", "puts the queue 9 levels below the root; at most 8 are allowed"}, check: queueAbsent("adm-deep-9")},
	}
}

// Admission follows the state table: every bad request is refused with a message naming the object,
// the field and the rule, and leaves what is stored as it was; what the table allows is admitted.
func TestAdmission(t *testing.T) {
	f := setUpAdmission(t)
	t.Run("rejects", func(t *testing.T) { testRejects(t, f) })
	t.Run("accepts", func(t *testing.T) { testAccepts(t, f) })
}

func testRejects(t *testing.T, f admissionFixture) {
	for _, tt := range badRequests(t) {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.send(f)
			if err == nil {
				t.Fatal("request was admitted")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err.Error(), w)
				}
			}
			if tt.check != nil {
				tt.check(t, f)
			}
		})
	}
}

// Submissions to Suspended queues are accepted, a pod joining a PodGroup its Closing queue accepted
// earlier is admitted, and pods of other schedulers are not looked at.
func testAccepts(t *testing.T, f admissionFixture) {
	withoutAdmission(t, func() {
		if _, err := cluster.Queues.SchedulingV1beta1().PodGroups(f.ns).Create(context.Background(),
			util.MakePodGroup(f.ns, "accepted-earlier").Queue("adm-closing").Obj(), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	accepted := []func(admissionFixture) error{
		createPodGroupErr("to-suspended", "adm-suspended"),
		createQueueUnitErr("unit-to-suspended", "adm-suspended"),
		createPodErr("pod-to-suspended", qLabel("adm-suspended")),
		createPodErr("replacement", map[string]string{schedulingv1beta1.PodGroupLabel: "accepted-earlier"}),
		func(f admissionFixture) error {
			pod := util.MakePod(f.ns, "other-scheduler").Labels(qLabel("adm-closed")).SchedulerName("default-scheduler").Obj()
			_, err := cluster.Kube.CoreV1().Pods(f.ns).Create(context.Background(), pod, metav1.CreateOptions{})
			return err
		},
	}
	for i, send := range accepted {
		if err := send(f); err != nil {
			t.Errorf("request %d refused: %v", i, err)
		}
	}
}

// waitNamespaceSeen waits until the scheduler's caches know a new namespace, as admission reads its
// queue annotation from them.
func waitNamespaceSeen(t *testing.T, namespace string) {
	t.Helper()
	probe := util.MakePod(namespace, "probe").Obj()
	err := wait.PollUntilContextTimeout(context.Background(), util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		_, err := cluster.Kube.CoreV1().Pods(namespace).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil, nil
	})
	if err != nil {
		t.Fatalf("namespace %s not seen by admission within %s", namespace, settle)
	}
}

func qLabel(q string) map[string]string { return map[string]string{schedulingv1beta1.QueueLabel: q} }

// A webhook configuration re-applied without its CA bundle (kubectl apply of the shipped manifest)
// gets it back within seconds: admission works again without waiting for the hourly certificate check.
func TestReappliedWebhookConfigurationGetsItsCABundle(t *testing.T) {
	admission := cluster.Kube.AdmissionregistrationV1()
	ctx := context.Background()
	validating, err := admission.ValidatingWebhookConfigurations().Get(ctx, config.DefaultConfigurationName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mutating, err := admission.MutatingWebhookConfigurations().Get(ctx, config.DefaultConfigurationName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range validating.Webhooks {
		validating.Webhooks[i].ClientConfig.CABundle = nil
	}
	for i := range mutating.Webhooks {
		mutating.Webhooks[i].ClientConfig.CABundle = nil
	}
	if _, err := admission.ValidatingWebhookConfigurations().Update(ctx, validating, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admission.MutatingWebhookConfigurations().Update(ctx, mutating, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The API server cannot call a webhook without the CA: with failurePolicy Fail, the probe below
	// is refused for the wrong reason until the bundle is back in both configurations.
	probe := util.MakeQueue("ca-probe").Parent("no-such-parent").Obj()
	var last error
	err = wait.PollUntilContextTimeout(ctx, util.PollInterval, settle, true, func(ctx context.Context) (bool, error) {
		v, err := admission.ValidatingWebhookConfigurations().Get(ctx, config.DefaultConfigurationName, metav1.GetOptions{})
		if err != nil || len(v.Webhooks[0].ClientConfig.CABundle) == 0 {
			return false, nil
		}
		m, err := admission.MutatingWebhookConfigurations().Get(ctx, config.DefaultConfigurationName, metav1.GetOptions{})
		if err != nil || len(m.Webhooks[0].ClientConfig.CABundle) == 0 {
			return false, nil
		}
		_, last = queues().Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return last != nil && strings.Contains(last.Error(), `spec.parent: Not found: "no-such-parent"`), nil
	})
	if err != nil {
		t.Fatalf("admission did not work again after the configurations were re-applied: %v", last)
	}
}
