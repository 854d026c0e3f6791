package gangsources

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	spv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"
	vcv1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/test/clustertest"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// The scheduler starts on a cluster without the other gang APIs and schedules gangs of its own; once
// their CRDs are installed, their PodGroups are mirrored, without a restart.
func TestGangSourcesAreTakenOnceTheirCRDsAreInstalled(t *testing.T) {
	// The package's cluster starts without them; a run of the test again (go test -count) finds them
	// installed by the first, and checks again that new PodGroups of theirs are mirrored.
	_, err := cluster.Kube.Discovery().ServerResourcesForGroupVersion(spv1alpha1.SchemeGroupVersion.String())
	if first := clustertest.Run(t) == 1; first && !apierrors.IsNotFound(err) {
		t.Fatalf("scheduling.x-k8s.io is served before the test installs it: %v", err)
	} else if !first && err != nil {
		t.Fatalf("scheduling.x-k8s.io is not served after the first run installed it: %v", err)
	}
	ns := newNamespace(t, "before-crds", schedulingv1beta1.DefaultQueue)
	if _, err := cluster.Queues.SchedulingV1beta1().PodGroups(ns).Create(context.Background(),
		util.MakePodGroup(ns, "own").MinMember(2).Obj(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		createPod(t, util.MakePod(ns, fmt.Sprintf("own-%d", i)).Label(schedulingv1beta1.PodGroupLabel, "own").
			Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj())
	}
	waitBound(t, ns, func(b map[string]int) bool { return b["own"] == 2 }, "a gang of queue-scheduler's own bound without the other APIs")
	deleteMembers(t, ns, "own")

	installGangCRDs(t)
	createSP(t, &spv1alpha1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: "sp", Namespace: ns}, Spec: spv1alpha1.PodGroupSpec{MinMember: 2}})
	createVolcano(t, &vcv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: "vc", Namespace: ns}, Spec: vcv1beta1.PodGroupSpec{MinMember: 3}})
	for name, source := range map[string]schedulingv1beta1.GangSource{"sp": schedulingv1beta1.GangSourceSchedulerPlugins, "vc": schedulingv1beta1.GangSourceVolcano} {
		var got *schedulingv1beta1.PodGroup
		poll(t, "mirrored "+name, func(context.Context) (bool, error) {
			got = mirror(t, ns, name)
			return got != nil, nil
		}, func() string { return "" })
		owner := metav1.GetControllerOf(got)
		if got.Labels[schedulingv1beta1.GangSourceLabel] != string(source) || owner == nil || owner.Name != name || owner.Kind != "PodGroup" {
			t.Errorf("mirror %s: labels %v, controller %v", name, got.Labels, owner)
		}
	}
	if got := mirror(t, ns, "vc"); got.Spec.MinMember != 3 || got.Spec.Queue != schedulingv1beta1.DefaultQueue {
		t.Errorf("mirror of vc: minMember %d queue %q, want 3 and the queue Volcano's CRD defaults to", got.Spec.MinMember, got.Spec.Queue)
	}
}

// runOperator creates the jobs' PodGroups and then their pods, member by member and job by job
// (interleaved), as their operator does: an operator that waits for its PodGroup to enter its queue
// creates that job's pods once it has.
func runOperator(t *testing.T, o operator, jobs ...job) {
	t.Helper()
	for _, j := range jobs {
		o.createGroup(t, j)
	}
	ready := map[string]bool{}
	admitted := func(j job) bool { return !slices.Contains([]string{"", "Pending"}, o.phase(t, j.namespace, j.name)) }
	if o.waitsForInqueue {
		// Groups created in the same instant enter in either order, as in Volcano (its job order
		// breaks a tie of creation times by UID): the source groups are mirrored side by side.
		poll(t, "a job's PodGroup past Pending", func(context.Context) (bool, error) {
			return slices.ContainsFunc(jobs, admitted), nil
		}, func() string { return describeMirror(t, jobs[0].namespace, o.group(jobs[0].name)) })
	}
	for _, j := range jobs {
		ready[j.name] = !o.waitsForInqueue || admitted(j)
	}
	for i := range jobs[0].members {
		for _, j := range jobs {
			if ready[j.name] {
				createPod(t, o.pod(j, int(i)))
			}
		}
	}
	for _, j := range jobs {
		if !ready[j.name] {
			waitThenCreate(t, o, j)
		}
	}
}

// waitThenCreate creates the pods of a job whose operator waits for its PodGroup, in the background,
// once the PodGroup is past Pending.
func waitThenCreate(t *testing.T, o operator, j job) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			pg, err := vc.SchedulingV1beta1().PodGroups(j.namespace).Get(ctx, o.group(j.name), metav1.GetOptions{})
			if err == nil && pg.Status.Phase != "" && pg.Status.Phase != vcv1beta1.PodGroupPending {
				break
			}
			select {
			case <-ctx.Done():
			case <-time.After(util.PollInterval):
			}
		}
		for i := range j.members {
			if ctx.Err() == nil {
				if _, err := cluster.Kube.CoreV1().Pods(j.namespace).Create(ctx, o.pod(j, int(i)), metav1.CreateOptions{}); err != nil && ctx.Err() == nil {
					t.Errorf("create pod %d of %s: %v", i, j.name, err)
				}
			}
		}
	}()
}

// Two jobs of 3 one-CPU members on 4 CPUs, their pods created interleaved, for each operator and
// gang mode: one job runs whole and the other has none of its pods bound (its PodGroup waits Pending,
// as its minResources do not fit beside the first's); the source PodGroups' status says so in the
// source's own phases; once the first job is gone the second runs whole.
func TestOperatorGangsRunWholeOneAfterTheOther(t *testing.T) {
	installGangCRDs(t)
	for i, o := range operators {
		t.Run(o.name, func(t *testing.T) {
			queue := clustertest.Named(t, fmt.Sprintf("whole-%d", i))
			createQueue(t, util.MakeQueue(queue).Obj())
			ns := newNamespace(t, queue, queue)
			a, b := job{namespace: ns, name: "job-a", members: 3, cpu: 1, queue: queue}, job{namespace: ns, name: "job-b", members: 3, cpu: 1, queue: queue}
			runOperator(t, o, a, b)
			waitBound(t, ns, func(got map[string]int) bool { return got[o.group(a.name)] == 3 || got[o.group(b.name)] == 3 }, "one job whole")
			if bound(t, ns)[o.group(b.name)] == 3 {
				a, b = b, a
			}
			if got := bound(t, ns)[o.group(b.name)]; got != 0 {
				t.Fatalf("%d pods of %s bound beside %s", got, b.name, a.name)
			}
			waitSourcePhase(t, o, ns, b.name, "Pending")
			wantCounted(t, queue, string(o.source), o.group(a.name), o.group(b.name))
			setPhase(t, ns, o.group(a.name), v1.PodRunning)
			waitSourcePhase(t, o, ns, a.name, "Running")
			if o.source == schedulingv1beta1.GangSourceVolcano {
				// A member lost after the gang ran: Volcano reads the gang as Unknown.
				deletePod(t, ns, memberNames(t, ns, o.group(a.name))[0])
				waitSourcePhase(t, o, ns, a.name, "Unknown")
			}
			o.finish(t, a)
			waitBound(t, ns, func(got map[string]int) bool { return got[o.group(b.name)] == 3 && got[o.group(a.name)] == 0 }, "the second job whole")
			setPhase(t, ns, o.group(b.name), v1.PodRunning)
			setPhase(t, ns, o.group(b.name), v1.PodSucceeded)
			waitSourcePhase(t, o, ns, b.name, o.completed())
		})
	}
}

// waitSourcePhase waits for the source PodGroup of job to show phase.
func waitSourcePhase(t *testing.T, o operator, namespace, job, phase string) {
	t.Helper()
	var last string
	poll(t, fmt.Sprintf("%s PodGroup of %s %s", o.source, job, phase), func(context.Context) (bool, error) {
		last = o.phase(t, namespace, job)
		return last == phase, nil
	}, func() string {
		m := mirror(t, namespace, o.group(job))
		return fmt.Sprintf("phase %s; mirror %+v; waiting: %s", last, m, waiting(t, namespace))
	})
}

// The Spark operator's PodGroups have minMember 1: the application enters its queue by its
// minResources, and its driver and executors are placed one by one. Two applications of 3 CPUs on
// a queue of 4: the second waits Pending, its pods held with the reason, until the first is gone.
func TestSparkApplicationsEnterTheirQueueByMinResources(t *testing.T) {
	installGangCRDs(t)
	for i, o := range sparkApps {
		t.Run(o.name, func(t *testing.T) {
			queue := clustertest.Named(t, fmt.Sprintf("spark-%d", i))
			createQueue(t, util.MakeQueue(queue).Capability(map[v1.ResourceName]string{v1.ResourceCPU: "4"}).Obj())
			ns := newNamespace(t, queue, queue)
			a, b := job{namespace: ns, name: "app-a", members: 3, cpu: 1, queue: queue}, job{namespace: ns, name: "app-b", members: 3, cpu: 1, queue: queue}
			runOperator(t, o, a, b)
			waitBound(t, ns, func(got map[string]int) bool { return got[o.group(a.name)] == 3 || got[o.group(b.name)] == 3 }, "one application's pods bound")
			if bound(t, ns)[o.group(b.name)] == 3 {
				a, b = b, a
			}
			err := util.WaitForPods(context.Background(), cluster.Kube, ns, []string{sparkPodName(b, 0)}, settle, "held while its PodGroup is Pending",
				util.HasUnschedulableMessage("is Pending"))
			if err != nil {
				t.Fatal(err)
			}
			if got := bound(t, ns)[o.group(b.name)]; got != 0 {
				t.Fatalf("%d pods of %s bound beside %s", got, b.name, a.name)
			}
			o.finish(t, a)
			waitBound(t, ns, func(got map[string]int) bool { return got[o.group(b.name)] == 3 }, "the second application's pods bound")
		})
	}
}

// The report that opened the work: a scheduler-plugins PodGroup of minMember 5 with five one-CPU
// pods on a cluster of 4 CPUs. No member is bound (no partial gang holds room); when a node is
// added the whole gang binds.
func TestGangLargerThanTheClusterBindsNothingUntilItFits(t *testing.T) {
	installGangCRDs(t)
	ns := newNamespace(t, "larger", schedulingv1beta1.DefaultQueue)
	createSP(t, &spv1alpha1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: "big", Namespace: ns}, Spec: spv1alpha1.PodGroupSpec{MinMember: 5}})
	for i := range 5 {
		createPod(t, util.MakePod(ns, fmt.Sprintf("big-%d", i)).Label(spv1alpha1.PodGroupLabel, "big").
			Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj())
	}
	waitMirrorCondition(t, ns, "big", "tasks in gang unschedulable")
	if got := bound(t, ns)["big"]; got != 0 {
		t.Fatalf("%d members of a gang that cannot fit were bound", got)
	}
	node := util.MakeNode("extra", "2", "8Gi")
	if _, err := cluster.Kube.CoreV1().Nodes().Create(context.Background(), node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		deleteMembers(t, ns, "big")
		waitNoPods(t, ns)
		if err := cluster.Kube.CoreV1().Nodes().Delete(context.Background(), "extra", metav1.DeleteOptions{}); err != nil {
			t.Error(err)
		}
	})
	waitBound(t, ns, func(got map[string]int) bool { return got["big"] == 5 }, "the whole gang bound once it fits")
}

// A gang whose last member never reaches scheduling times out, for each operator and gang mode:
// after the scheduleTimeoutSeconds the operator passes on (training-operator's scheduler-plugins
// mode), else after the Gang plugin's default; the waiting members are released, none is bound, and
// the PodGroups carry the reason. (The Spark operator's PodGroups have minMember 1: no member waits
// for another.)
func TestGangSourcesTimeOut(t *testing.T) {
	installGangCRDs(t)
	for i, o := range operators {
		t.Run(o.name, func(t *testing.T) {
			queue := clustertest.Named(t, fmt.Sprintf("timeout-%d", i))
			createQueue(t, util.MakeQueue(queue).Obj())
			ns := newNamespace(t, queue, queue)
			j := job{namespace: ns, name: "late", members: 3, cpu: 1, queue: queue, timeout: ptr.To[int32](2)}
			o.createGroup(t, j)
			if o.waitsForInqueue {
				waitSourcePhase(t, o, ns, j.name, "Inqueue")
			}
			for i := range 3 {
				pod := o.pod(j, i)
				if i == 2 {
					pod.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "example.com/never"}}
				}
				createPod(t, pod)
			}
			want := fmt.Sprintf("timed out after %ds waiting for 3 members", defaultTimeout)
			if o.passesTimeout {
				want = "timed out after 2s waiting for 3 members"
			}
			if o.source == schedulingv1beta1.GangSourceVolcano {
				waitVolcanoCondition(t, ns, o.group(j.name), want)
			}
			waitMirrorCondition(t, ns, o.group(j.name), want)
			if got := bound(t, ns)[o.group(j.name)]; got != 0 {
				t.Fatalf("%d members of a gang that timed out were bound", got)
			}
		})
	}
}

// waitVolcanoCondition waits for the Volcano PodGroup's Unschedulable condition to say text.
func waitVolcanoCondition(t *testing.T, namespace, name, text string) {
	t.Helper()
	var last []vcv1beta1.PodGroupCondition
	poll(t, fmt.Sprintf("Volcano PodGroup %s Unschedulable with %q", name, text), func(ctx context.Context) (bool, error) {
		pg, err := vc.SchedulingV1beta1().PodGroups(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = pg.Status.Conditions
		return slices.ContainsFunc(pg.Status.Conditions, func(c vcv1beta1.PodGroupCondition) bool {
			return c.Type == vcv1beta1.PodGroupUnschedulableType && c.Status == v1.ConditionTrue && strings.Contains(c.Message, text)
		}), nil
	}, func() string { return fmt.Sprintf("conditions %+v", last) })
}

// A queue below its share takes its room back for a gang of another API as for one of its own, for
// each operator and gang mode: a borrower fills the cluster, and the owner's job of 2 one-CPU members
// binds whole.
func TestGangSourcesReclaimTheirShare(t *testing.T) {
	installGangCRDs(t)
	for i, o := range append(slices.Clone(operators), sparkApps...) {
		t.Run(o.name, func(t *testing.T) {
			borrower, owner := clustertest.Named(t, fmt.Sprintf("borrower-%d", i)), clustertest.Named(t, fmt.Sprintf("owner-%d", i))
			createQueue(t, util.MakeQueue(borrower).Obj())
			createQueue(t, util.MakeQueue(owner).Obj())
			bns, ons := newNamespace(t, borrower, borrower), newNamespace(t, owner, owner)
			for i := range 5 {
				createPod(t, util.MakePod(bns, fmt.Sprintf("b-%d", i)).Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj())
			}
			waitBound(t, bns, func(got map[string]int) bool { return got[""] == 4 }, "the borrower holding the cluster")
			j := job{namespace: ons, name: "trainer", members: 2, cpu: 1, queue: owner}
			runOperator(t, o, j)
			waitBound(t, ons, func(got map[string]int) bool { return got[o.group(j.name)] == 2 }, "the owner's gang whole")
			waitBound(t, bns, func(got map[string]int) bool { return got[""] == 2 }, "the borrower at its share")
			// The Spark operator's PodGroups ask minMember 1 (minResources covers the executors): each
			// of its pods reclaims for itself.
			if i < len(operators) {
				wantTakenForTheGang(t, bns, ons+"/"+o.group(j.name), 2)
			}
		})
	}
}

// wantTakenForTheGang checks that the n pods evicted from namespace were taken for the gang key as
// one preemptor ("podgroup <key>" in their Preempted events), not for its members one by one.
func wantTakenForTheGang(t *testing.T, namespace, key string, n int) {
	t.Helper()
	messages, err := util.WaitForEventMessages(context.Background(), cluster.Kube, namespace, "Preempted", n, settle)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range messages {
		if !strings.Contains(m, "by podgroup "+key+" ") {
			t.Errorf("victim not taken for podgroup %s as one: %q", key, m)
		}
	}
}

// Volcano's spec.queue names a queue-scheduler queue; one that does not exist holds the gang: no
// PodGroup of queue-scheduler stands for it, the Volcano PodGroup's condition says why, and its pods
// wait saying where to look.
func TestVolcanoPodGroupOfAMissingQueueWaits(t *testing.T) {
	installGangCRDs(t)
	ns := newNamespace(t, "missing-queue", schedulingv1beta1.DefaultQueue)
	o := operators[3] // kuberay/volcano: queue from the cluster's volcano.sh/queue-name label
	j := job{namespace: ns, name: "ray", members: 2, cpu: 1, queue: "no-such-queue"}
	o.createGroup(t, j)
	waitVolcanoCondition(t, ns, o.group(j.name), `spec.queue: Not found: "no-such-queue"`)
	createPod(t, o.pod(j, 0))
	err := util.WaitForPods(context.Background(), cluster.Kube, ns, []string{j.name + "-head"}, settle, "held with the reason",
		util.HasUnschedulableMessage("stands for its volcano PodGroup, does not exist (yet)"))
	if err != nil {
		t.Fatal(err)
	}
	if pg := mirror(t, ns, o.group(j.name)); pg != nil {
		t.Fatalf("a PodGroup of queue-scheduler stands for a gang its queue refused: %+v", pg.Spec)
	}
}

// A pod names one gang: two different PodGroups, in any two of the APIs, are refused at admission,
// naming the field.
func TestPodNamingTwoGangsIsRefused(t *testing.T) {
	ns := newNamespace(t, "two-gangs", schedulingv1beta1.DefaultQueue)
	pod := util.MakePod(ns, "two").Label(spv1alpha1.PodGroupLabel, "a").Obj()
	pod.Annotations = map[string]string{vcv1beta1.KubeGroupNameAnnotationKey: "b"}
	_, err := cluster.Kube.CoreV1().Pods(ns).Create(context.Background(), pod, metav1.CreateOptions{})
	if want := `metadata.annotations[scheduling.k8s.io/group-name]: Invalid value: "b": the pod already names PodGroup "a"`; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want %q", err, want)
	}
}

// A mirror goes with its source PodGroup.
func TestMirrorGoesWithItsSource(t *testing.T) {
	installGangCRDs(t)
	ns := newNamespace(t, "goes", schedulingv1beta1.DefaultQueue)
	createSP(t, &spv1alpha1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: "short", Namespace: ns}, Spec: spv1alpha1.PodGroupSpec{MinMember: 2}})
	poll(t, "mirrored", func(context.Context) (bool, error) { return mirror(t, ns, "short") != nil, nil }, func() string { return "" })
	if err := sp.SchedulingV1alpha1().PodGroups(ns).Delete(context.Background(), "short", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, "the mirror deleted", func(context.Context) (bool, error) { return mirror(t, ns, "short") == nil, nil }, func() string { return "" })
}

// wantCounted checks that the queue's status counts the admitted and the Pending gang, and that
// kubectl queue jobs lists both as PodGroups of their source.
func wantCounted(t *testing.T, queue, source, admitted, pending string) {
	t.Helper()
	var status schedulingv1beta1.QueueStatus
	poll(t, "queue "+queue+" counting 1 admitted and 1 Pending PodGroup", func(ctx context.Context) (bool, error) {
		q, err := cluster.Queues.SchedulingV1beta1().Queues().Get(ctx, queue, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		status = q.Status
		return q.Status.Pending == 1 && q.Status.Inqueue+q.Status.Running == 1, nil
	}, func() string { return fmt.Sprintf("status %+v", status) })
	out, err := util.KubectlQueue(context.Background(), cluster.Kubeconfig, "jobs", queue)
	if err != nil {
		t.Fatalf("kubectl queue jobs %s: %v\n%s", queue, err, out)
	}
	for _, name := range []string{admitted, pending} {
		if !strings.Contains(out, name) || !strings.Contains(out, "PodGroup ("+source+")") {
			t.Errorf("kubectl queue jobs %s does not list %s as a PodGroup (%s):\n%s", queue, name, source, out)
		}
	}
}
