package gangsources

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/utils/ptr"
	spv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"
	vcv1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// job is a job whose operator makes a gang: members pods of cpu CPUs each.
type job struct {
	namespace, name string
	members         int32
	cpu             int64
	// timeout is the user's scheduleTimeoutSeconds, where the operator passes one on.
	timeout *int32
	// queue is the queue-scheduler queue the user names where the operator passes a queue on.
	queue string
}

func (j job) minResources() v1.ResourceList {
	return v1.ResourceList{v1.ResourceCPU: *resource.NewQuantity(int64(j.members)*j.cpu, resource.DecimalSI)}
}

func (j job) requests() v1.ResourceList {
	return v1.ResourceList{v1.ResourceCPU: *resource.NewQuantity(j.cpu, resource.DecimalSI)}
}

// operator creates gangs as one job operator does in one of its gang modes: its PodGroup, then its
// pods, each field as the operator's code sets it (the comments cite where).
type operator struct {
	name   string
	source schedulingv1beta1.GangSource
	// group names the PodGroup of a job.
	group func(job string) string
	// createGroup creates the job's PodGroup.
	createGroup func(t *testing.T, j job)
	// pod is the job's member i.
	pod func(j job, i int) *v1.Pod
	// waitsForInqueue: the operator creates pods only once the PodGroup's phase is neither empty
	// nor Pending.
	waitsForInqueue bool
	// passesTimeout: the operator passes the job's scheduleTimeoutSeconds on to its PodGroup.
	passesTimeout bool
}

// completed is the phase the source's own controller gives a PodGroup whose members succeeded.
func (o operator) completed() string {
	if o.source == schedulingv1beta1.GangSourceSchedulerPlugins {
		return string(spv1alpha1.PodGroupFinished)
	}
	return string(vcv1beta1.PodGroupCompleted)
}

func ownerRef(apiVersion, kind, name string, controller bool) metav1.OwnerReference {
	ref := metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: uuid.NewUUID()}
	if controller {
		ref.Controller, ref.BlockOwnerDeletion = ptr.To(true), ptr.To(true)
	}
	return ref
}

func memberPod(j job, name, schedulerName string, owner metav1.OwnerReference) *v1.Pod {
	pod := util.MakePod(j.namespace, name).Obj()
	pod.Spec.SchedulerName = schedulerName
	pod.Spec.Containers[0].Resources.Requests = j.requests()
	pod.OwnerReferences = []metav1.OwnerReference{owner}
	return pod
}

func createSP(t *testing.T, pg *spv1alpha1.PodGroup) {
	t.Helper()
	if _, err := sp.SchedulingV1alpha1().PodGroups(pg.Namespace).Create(context.Background(), pg, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create scheduler-plugins PodGroup %s: %v", pg.Name, err)
	}
}

func createVolcano(t *testing.T, pg *vcv1beta1.PodGroup) {
	t.Helper()
	if _, err := vc.SchedulingV1beta1().PodGroups(pg.Namespace).Create(context.Background(), pg, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create Volcano PodGroup %s: %v", pg.Name, err)
	}
}

// pytorchJob is the owner reference training-operator v1.9 gives a PyTorchJob's PodGroup and pods
// (pkg/controller.v1/common/job_controller.go GenOwnerReference: controller, blockOwnerDeletion).
func pytorchJob(j job) metav1.OwnerReference {
	return ownerRef("kubeflow.org/v1", "PyTorchJob", j.name, true)
}

// trainingOperatorPod is a worker of a PyTorchJob (pkg/controller.v1/common/pod.go): the
// training.kubeflow.org labels, the job as controller owner.
func trainingOperatorPod(j job, i int, schedulerName string) *v1.Pod {
	pod := memberPod(j, fmt.Sprintf("%s-worker-%d", j.name, i), schedulerName, pytorchJob(j))
	pod.Labels = map[string]string{"training.kubeflow.org/operator-name": "pytorchjob-controller",
		"training.kubeflow.org/job-name": j.name, "training.kubeflow.org/replica-type": "worker",
		"training.kubeflow.org/replica-index": fmt.Sprint(i)}
	return pod
}

var operators = []operator{
	{
		// training-operator v1.9 with --gang-scheduler-name=queue-scheduler (any name but "volcano"
		// selects scheduler-plugins PodGroups, and becomes the pods' schedulerName).
		name: "training-operator/scheduler-plugins", source: schedulingv1beta1.GangSourceSchedulerPlugins,
		group: func(job string) string { return job },
		createGroup: func(t *testing.T, j job) {
			// pkg/controller.v1/common/scheduling.go SyncPodGroup and job.go: name and namespace of the
			// job, the job's annotations, minMember = all replicas, minResources = their requests,
			// scheduleTimeoutSeconds from runPolicy.schedulingPolicy.
			createSP(t, &spv1alpha1.PodGroup{
				ObjectMeta: metav1.ObjectMeta{Name: j.name, Namespace: j.namespace, OwnerReferences: []metav1.OwnerReference{pytorchJob(j)}},
				Spec:       spv1alpha1.PodGroupSpec{MinMember: j.members, MinResources: j.minResources(), ScheduleTimeoutSeconds: j.timeout},
			})
		},
		pod: func(j job, i int) *v1.Pod {
			// pkg/controller.v1/control/podgroup_control.go: the pod-group label.
			pod := trainingOperatorPod(j, i, schedulingv1beta1.SchedulerName)
			pod.Labels[spv1alpha1.PodGroupLabel] = j.name
			return pod
		},
		passesTimeout: true,
	},
	{
		// training-operator v1.9 with --gang-scheduler-name=volcano.
		name: "training-operator/volcano", source: schedulingv1beta1.GangSourceVolcano,
		group: func(job string) string { return job },
		createGroup: func(t *testing.T, j job) {
			// job.go: spec replaced by minMember, queue (schedulingPolicy.queue, else "default"),
			// priorityClassName and minResources; no minTaskMember, no timeout.
			createVolcano(t, &vcv1beta1.PodGroup{
				ObjectMeta: metav1.ObjectMeta{Name: j.name, Namespace: j.namespace, OwnerReferences: []metav1.OwnerReference{pytorchJob(j)}},
				Spec:       vcv1beta1.PodGroupSpec{MinMember: j.members, Queue: j.queue, MinResources: ptr.To(j.minResources())},
			})
		},
		pod: func(j job, i int) *v1.Pod {
			// podgroup_control.go: schedulerName "volcano" when the template names none, the
			// group-name and task-spec annotations.
			pod := trainingOperatorPod(j, i, "volcano")
			pod.Annotations = map[string]string{vcv1beta1.KubeGroupNameAnnotationKey: j.name, "volcano.sh/task-spec": "worker"}
			return pod
		},
		// job.go ReconcilePods after DelayPodCreationDueToPodGroup: pods wait for a phase past Pending.
		waitsForInqueue: true,
	},
	{
		// KubeRay v1.7 with batchScheduler: scheduler-plugins, a RayCluster labelled
		// ray.io/gang-scheduling-enabled.
		name: "kuberay/scheduler-plugins", source: schedulingv1beta1.GangSourceSchedulerPlugins,
		group: func(job string) string { return job },
		createGroup: func(t *testing.T, j job) {
			// batchscheduler/scheduler-plugins/scheduler_plugins.go: the cluster's name, an owner
			// reference without the controller flag, minMember = workers + 1 (the head),
			// minResources = head + workers; no timeout.
			createSP(t, &spv1alpha1.PodGroup{
				ObjectMeta: metav1.ObjectMeta{Name: j.name, Namespace: j.namespace,
					OwnerReferences: []metav1.OwnerReference{ownerRef("ray.io/v1", "RayCluster", j.name, false)}},
				Spec: spv1alpha1.PodGroupSpec{MinMember: j.members, MinResources: j.minResources()},
			})
		},
		pod: func(j job, i int) *v1.Pod {
			// scheduler_plugins.go AddMetadataToChildResource: the pod-group label, and schedulerName
			// scheduler-plugins-scheduler whatever the template says; the managed namespace gives the
			// pod to queue-scheduler.
			name := fmt.Sprintf("%s-worker-%d", j.name, i)
			if i == 0 {
				name = j.name + "-head"
			}
			pod := memberPod(j, name, "scheduler-plugins-scheduler", ownerRef("ray.io/v1", "RayCluster", j.name, true))
			pod.Labels = map[string]string{spv1alpha1.PodGroupLabel: j.name, "ray.io/cluster": j.name}
			return pod
		},
	},
	{
		// KubeRay v1.7 with batchScheduler: volcano.
		name: "kuberay/volcano", source: schedulingv1beta1.GangSourceVolcano,
		group: func(job string) string { return "ray-" + job + "-pg" },
		createGroup: func(t *testing.T, j job) {
			// batchscheduler/volcano/volcano_scheduler.go: "ray-<name>-pg", a controller reference,
			// queue from the cluster's volcano.sh/queue-name label, status.phase Pending at creation.
			pg := &vcv1beta1.PodGroup{
				ObjectMeta: metav1.ObjectMeta{Name: "ray-" + j.name + "-pg", Namespace: j.namespace,
					OwnerReferences: []metav1.OwnerReference{ownerRef("ray.io/v1", "RayCluster", j.name, true)}},
				Spec:   vcv1beta1.PodGroupSpec{MinMember: j.members, Queue: j.queue, MinResources: ptr.To(j.minResources())},
				Status: vcv1beta1.PodGroupStatus{Phase: vcv1beta1.PodGroupPending},
			}
			createVolcano(t, pg)
		},
		pod: func(j job, i int) *v1.Pod {
			// volcano_scheduler.go AddMetadataToChildResource: schedulerName volcano, the group-name
			// annotation, task-spec headgroup or the worker group's name.
			name, task := fmt.Sprintf("%s-workers-%d", j.name, i), "workers"
			if i == 0 {
				name, task = j.name+"-head", "headgroup"
			}
			pod := memberPod(j, name, "volcano", ownerRef("ray.io/v1", "RayCluster", j.name, true))
			pod.Labels = map[string]string{"ray.io/cluster": j.name}
			pod.Annotations = map[string]string{vcv1beta1.KubeGroupNameAnnotationKey: "ray-" + j.name + "-pg", "volcano.sh/task-spec": task}
			return pod
		},
	},
}

// sparkApp is the Spark operator's way: one PodGroup per application with minMember 1 (the driver
// and executors are placed one by one) and minResources of driver and executors, which is what
// enters the queue.
var sparkApps = []operator{
	{
		// spark-operator v2.5 with batchScheduler naming queue-scheduler among --kube-scheduler-names.
		name: "spark-operator/scheduler-plugins", source: schedulingv1beta1.GangSourceSchedulerPlugins,
		group: func(app string) string { return app + "-pg" },
		createGroup: func(t *testing.T, j job) {
			// internal/scheduler/kubescheduler/scheduler.go: "<app>-pg", a controller reference,
			// minMember 1, minResources = driver + executors.
			createSP(t, &spv1alpha1.PodGroup{
				ObjectMeta: metav1.ObjectMeta{Name: j.name + "-pg", Namespace: j.namespace,
					OwnerReferences: []metav1.OwnerReference{ownerRef("sparkoperator.k8s.io/v1beta2", "SparkApplication", j.name, true)}},
				Spec: spv1alpha1.PodGroupSpec{MinMember: 1, MinResources: j.minResources()},
			})
		},
		pod: func(j job, i int) *v1.Pod {
			// The app's labels reach the driver and executors through spark.kubernetes.*.label.*;
			// the operator's webhook sets schedulerName from spec.batchScheduler.
			pod := memberPod(j, sparkPodName(j, i), schedulingv1beta1.SchedulerName, ownerRef("v1", "Pod", j.name+"-driver", false))
			pod.Labels = map[string]string{spv1alpha1.PodGroupLabel: j.name + "-pg", "sparkoperator.k8s.io/app-name": j.name}
			return pod
		},
	},
	{
		// spark-operator v2.5 with batchScheduler: volcano.
		name: "spark-operator/volcano", source: schedulingv1beta1.GangSourceVolcano,
		group: func(app string) string { return "spark-" + app + "-pg" },
		createGroup: func(t *testing.T, j job) {
			// internal/scheduler/volcano/scheduler.go: "spark-<app>-pg", minMember 1, minResources,
			// queue from spec.batchSchedulerOptions.queue, status.phase Pending at creation.
			createVolcano(t, &vcv1beta1.PodGroup{
				ObjectMeta: metav1.ObjectMeta{Name: "spark-" + j.name + "-pg", Namespace: j.namespace,
					OwnerReferences: []metav1.OwnerReference{ownerRef("sparkoperator.k8s.io/v1beta2", "SparkApplication", j.name, true)}},
				Spec:   vcv1beta1.PodGroupSpec{MinMember: 1, Queue: j.queue, MinResources: ptr.To(j.minResources())},
				Status: vcv1beta1.PodGroupStatus{Phase: vcv1beta1.PodGroupPending},
			})
		},
		pod: func(j job, i int) *v1.Pod {
			// The group-name annotation through spark.kubernetes.*.annotation.*; the webhook sets
			// schedulerName volcano.
			pod := memberPod(j, sparkPodName(j, i), "volcano", ownerRef("v1", "Pod", j.name+"-driver", false))
			pod.Labels = map[string]string{"sparkoperator.k8s.io/app-name": j.name}
			pod.Annotations = map[string]string{vcv1beta1.KubeGroupNameAnnotationKey: "spark-" + j.name + "-pg"}
			return pod
		},
	},
}

func sparkPodName(j job, i int) string {
	if i == 0 {
		return j.name + "-driver"
	}
	return fmt.Sprintf("%s-exec-%d", j.name, i)
}

// finish ends a job as its operator does once it is done: its pods go, and its PodGroup.
func (o operator) finish(t *testing.T, j job) {
	t.Helper()
	deleteMembers(t, j.namespace, o.group(j.name))
	var err error
	if o.source == schedulingv1beta1.GangSourceSchedulerPlugins {
		err = sp.SchedulingV1alpha1().PodGroups(j.namespace).Delete(context.Background(), o.group(j.name), metav1.DeleteOptions{})
	} else {
		err = vc.SchedulingV1beta1().PodGroups(j.namespace).Delete(context.Background(), o.group(j.name), metav1.DeleteOptions{})
	}
	if err != nil {
		t.Fatalf("delete the PodGroup of %s: %v", j.name, err)
	}
}

// phase reads the status phase of the operator's PodGroup of job.
func (o operator) phase(t *testing.T, namespace, job string) string {
	t.Helper()
	ctx := context.Background()
	switch o.source {
	case schedulingv1beta1.GangSourceSchedulerPlugins:
		pg, err := sp.SchedulingV1alpha1().PodGroups(namespace).Get(ctx, o.group(job), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return string(pg.Status.Phase)
	default:
		pg, err := vc.SchedulingV1beta1().PodGroups(namespace).Get(ctx, o.group(job), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return string(pg.Status.Phase)
	}
}
