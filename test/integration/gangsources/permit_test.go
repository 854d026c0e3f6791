package gangsources

import (
	"context"
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/utils/ptr"
	spv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"
	vcv1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/test/clustertest"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// handWritten are PodGroups as users write them by hand, without minResources (coscheduling's and
// Volcano's examples): their queue admits them at once, and the nodes alone decide, at Permit.
var handWritten = []struct {
	source schedulingv1beta1.GangSource
	create func(t *testing.T, namespace, name string, minMember int32)
	pod    func(namespace, group string, i int) *v1.Pod
}{
	{
		source: schedulingv1beta1.GangSourceSchedulerPlugins,
		create: func(t *testing.T, namespace, name string, minMember int32) {
			createSP(t, &spv1alpha1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
				Spec: spv1alpha1.PodGroupSpec{MinMember: minMember}})
		},
		pod: func(namespace, group string, i int) *v1.Pod {
			return util.MakePod(namespace, fmt.Sprintf("%s-%d", group, i)).Label(spv1alpha1.PodGroupLabel, group).
				Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()
		},
	},
	{
		source: schedulingv1beta1.GangSourceVolcano,
		create: func(t *testing.T, namespace, name string, minMember int32) {
			createVolcano(t, &vcv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
				Spec: vcv1beta1.PodGroupSpec{MinMember: minMember}})
		},
		pod: func(namespace, group string, i int) *v1.Pod {
			pod := util.MakePod(namespace, fmt.Sprintf("%s-%d", group, i)).Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()
			pod.Annotations = map[string]string{vcv1beta1.KubeGroupNameAnnotationKey: group}
			return pod
		},
	},
}

// Two gangs of 3 one-CPU pods without minResources, both admitted to their queue, on 4 CPUs, their
// pods created interleaved: the nodes hold one gang only, so one binds whole and the other, rejected
// at Permit, has none of its pods bound and says why; once the first is gone the second binds whole.
func TestAdmittedGangsMeetAtPermit(t *testing.T) {
	installGangCRDs(t)
	for i, g := range handWritten {
		t.Run(string(g.source), func(t *testing.T) {
			queue := clustertest.Named(t, fmt.Sprintf("permit-%d", i))
			createQueue(t, util.MakeQueue(queue).Obj())
			ns := newNamespace(t, queue, queue)
			g.create(t, ns, "ga", 3)
			g.create(t, ns, "gb", 3)
			for i := range 3 {
				createPod(t, g.pod(ns, "ga", i))
				createPod(t, g.pod(ns, "gb", i))
			}
			first, second := "ga", "gb"
			waitBound(t, ns, func(got map[string]int) bool {
				if got["gb"] == 3 {
					first, second = "gb", "ga"
				}
				return got[first] == 3
			}, "one gang whole")
			waitMirrorCondition(t, ns, second, "tasks in gang unschedulable")
			if got := bound(t, ns)[second]; got != 0 {
				t.Fatalf("%d pods of %s bound beside %s", got, second, first)
			}
			deleteMembers(t, ns, first)
			waitBound(t, ns, func(got map[string]int) bool { return got[second] == 3 }, "the second gang whole")
		})
	}
}

// A Volcano job's PodGroup asks for a least number of pods of each task (minTaskMember, as Volcano's
// job controller writes it from each task's minAvailable): three workers make minMember, but without
// the parameter server no pod is bound, and they say which task is missing; once it comes, all bind.
func TestVolcanoTaskMinimumsHoldTheGang(t *testing.T) {
	installGangCRDs(t)
	queue := clustertest.Named(t, "tasks")
	createQueue(t, util.MakeQueue(queue).Obj())
	ns := newNamespace(t, queue, queue)
	createVolcano(t, &vcv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: "tf", Namespace: ns},
		Spec: vcv1beta1.PodGroupSpec{MinMember: 3, Queue: queue, MinTaskMember: map[string]int32{"ps": 1, "worker": 2}}})
	member := func(task string, i int) *v1.Pod {
		pod := util.MakePod(ns, fmt.Sprintf("tf-%s-%d", task, i)).Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()
		// Volcano's job controller: the group-name and task-spec annotations.
		pod.Annotations = map[string]string{vcv1beta1.KubeGroupNameAnnotationKey: "tf", schedulingv1beta1.VolcanoTaskAnnotation: task}
		return pod
	}
	for i := range 3 {
		createPod(t, member("worker", i))
	}
	err := util.WaitForPods(context.Background(), cluster.Kube, ns, []string{"tf-worker-0", "tf-worker-1", "tf-worker-2"}, settle,
		"held for the missing task", util.HasUnschedulableMessage(`has 0 of its minTaskMember 1 pods of task "ps"`))
	if err != nil {
		t.Fatal(err)
	}
	if got := bound(t, ns)["tf"]; got != 0 {
		t.Fatalf("%d workers bound without the parameter server", got)
	}
	createPod(t, member("ps", 0))
	waitBound(t, ns, func(got map[string]int) bool { return got["tf"] == 4 }, "the job whole once its parameter server came")
}

// A PodGroup of queue-scheduler's left by an earlier source PodGroup of the same name (an operator
// deleting and creating its job's PodGroup again faster than the mirror went) is replaced by a
// mirror of the new one.
func TestMirrorOfAnEarlierSourceIsReplaced(t *testing.T) {
	installGangCRDs(t)
	ns := newNamespace(t, "again", schedulingv1beta1.DefaultQueue)
	stale := util.MakePodGroup(ns, "again").MinMember(5).Obj()
	stale.Labels = map[string]string{schedulingv1beta1.GangSourceLabel: string(schedulingv1beta1.GangSourceSchedulerPlugins)}
	stale.OwnerReferences = []metav1.OwnerReference{{APIVersion: spv1alpha1.SchemeGroupVersion.String(), Kind: "PodGroup", Name: "again",
		UID: uuid.NewUUID(), Controller: ptr.To(true)}}
	if _, err := cluster.Queues.SchedulingV1beta1().PodGroups(ns).Create(context.Background(), stale, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createSP(t, &spv1alpha1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: "again", Namespace: ns}, Spec: spv1alpha1.PodGroupSpec{MinMember: 2}})
	source, err := sp.SchedulingV1alpha1().PodGroups(ns).Get(context.Background(), "again", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got *schedulingv1beta1.PodGroup
	poll(t, "the mirror of the new source", func(context.Context) (bool, error) {
		if got = mirror(t, ns, "again"); got == nil {
			return false, nil
		}
		owner := metav1.GetControllerOfNoCopy(got)
		return owner != nil && owner.UID == source.UID && got.Spec.MinMember == 2, nil
	}, func() string { return fmt.Sprintf("mirror %+v", got) })
	for i := range 2 {
		createPod(t, util.MakePod(ns, fmt.Sprintf("again-%d", i)).Label(spv1alpha1.PodGroupLabel, "again").
			Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj())
	}
	waitBound(t, ns, func(got map[string]int) bool { return got["again"] == 2 }, "the new gang whole")
}

// A gang of another API enters its queue by the queue's tenancy rules, as one of queue-scheduler's
// own: a queue that does not take the namespace gets no mirror of it, the source PodGroup carries a
// NotMirrored event naming the queue, and its pods wait.
func TestGangSourcesKeepTheQueuesTenancy(t *testing.T) {
	installGangCRDs(t)
	queue := clustertest.Named(t, "picky-sources")
	createQueue(t, util.MakeQueue(queue).Namespaces(map[string]string{"team": "picky"}).Obj())
	ns := newNamespace(t, "not-picky-sources", queue)
	createSP(t, &spv1alpha1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: "g", Namespace: ns}, Spec: spv1alpha1.PodGroupSpec{MinMember: 2}})
	for i := range 2 {
		createPod(t, util.MakePod(ns, fmt.Sprintf("g-%d", i)).Label(spv1alpha1.PodGroupLabel, "g").
			Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj())
	}
	var messages []string
	poll(t, "a NotMirrored event naming the queue", func(ctx context.Context) (bool, error) {
		events, err := cluster.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=g,reason=NotMirrored"})
		if err != nil {
			return false, nil
		}
		messages = messages[:0]
		for _, e := range events.Items {
			messages = append(messages, e.Message)
			if strings.Contains(e.Message, queue) {
				return true, nil
			}
		}
		return false, nil
	}, func() string { return fmt.Sprintf("events %q", messages) })
	if pg := mirror(t, ns, "g"); pg != nil {
		t.Fatalf("a PodGroup of queue-scheduler stands for a gang its queue refused: %+v", pg.Spec)
	}
	if got := bound(t, ns)["g"]; got != 0 {
		t.Fatalf("%d pods bound of a gang its queue refused", got)
	}
}
