package webhook

import (
	"context"
	"fmt"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
)

// patchOp is one JSON Patch operation.
type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

// mutatePod decides a new pod's scheduler and queue, once. In a namespace opted in to queue-scheduler
// a pod that names no scheduler gets queue-scheduler, unless it is a DaemonSet's or already on a node;
// so does one that names a PodGroup of a gang source queue-scheduler takes, whatever scheduler it
// names (KubeRay, for one, writes its gang scheduler's name into every pod). A pod of queue-scheduler without a queue label
// gets one: its PodGroup's queue, else its QueueUnit's, else its namespace's annotation, else
// "default"; one without a runtime bound gets its Job's, or its queue's defaultActiveDeadlineSeconds. A
// pod that names a queue but another scheduler is admitted with a warning.
func (s *Server) mutatePod(ctx context.Context, req *admissionv1.AdmissionRequest) (decision, error) {
	pod, err := decode[v1.Pod](req.Object.Raw)
	if err != nil || pod == nil || req.Operation != admissionv1.Create {
		return decision{}, err
	}
	pod.Namespace = req.Namespace
	ns := s.namespaceOf(ctx, pod.Namespace)
	var d decision
	if ns != nil && ns.Labels[schedulingv1beta1.ManagedLabel] == "true" && placedByKubernetes(pod) &&
		(pod.Spec.SchedulerName == "" || pod.Spec.SchedulerName == v1.DefaultSchedulerName || s.namesTakenGang(pod)) {
		pod.Spec.SchedulerName = schedulingv1beta1.SchedulerName
		d.patch = append(d.patch, patchOp{Op: "add", Path: "/spec/schedulerName", Value: pod.Spec.SchedulerName})
	}
	if pod.Spec.SchedulerName != schedulingv1beta1.SchedulerName {
		if names := namedWork(pod); names != "" {
			d.warnings = append(d.warnings, fmt.Sprintf(
				"pod names %s but spec.schedulerName %q: queue-scheduler does not schedule it and no queue counts it; set spec.schedulerName: %s",
				names, pod.Spec.SchedulerName, schedulingv1beta1.SchedulerName))
		}
		return d, nil
	}
	s.labelForeignGang(pod, &d)
	queue := pod.Labels[schedulingv1beta1.QueueLabel]
	if queue == "" {
		// A pod of a PodGroup not created yet gets no label: the scheduler resolves its queue from
		// the PodGroup once it exists.
		if queue, err = s.acct.QueueOfNewPod(pod, ns, s.podGroupReader(ctx)); err == nil {
			d.patch = append(d.patch, addLabel(pod, schedulingv1beta1.QueueLabel, queue))
		}
	}
	s.writeDeadline(ctx, pod, queue, &d)
	return d, nil
}

// writeDeadline gives a pod that sets no activeDeadlineSeconds of its own the runtime bound that
// will stop it, written where the kubelet enforces it and no one can raise it (a pod's
// activeDeadlineSeconds may only come down): its Job's activeDeadlineSeconds, as the time left of it
// (a Job's may be raised or removed at any time, so the scheduler reads only the pod's), else its
// queue's defaultActiveDeadlineSeconds, by accounting.DeadlineFor, which the forecast shares. The Job
// is read from the API server: a Job's first pods may come before any cache has it. A Job that
// cannot be read leaves the pod as it is.
func (s *Server) writeDeadline(ctx context.Context, pod *v1.Pod, queue string, d *decision) {
	if pod.Spec.ActiveDeadlineSeconds != nil {
		return
	}
	var queueDefault *int64
	if queue != "" {
		queueDefault = s.acct.DefaultDeadline(queue)
	}
	var bounding *batchv1.Job
	for _, ref := range pod.OwnerReferences {
		if ref.Kind != "Job" || ref.APIVersion != "batch/v1" {
			continue
		}
		job, err := s.kube.BatchV1().Jobs(pod.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			d.warnings = append(d.warnings, fmt.Sprintf(
				"could not read Job %s/%s (%v): the pod gets no runtime bound, and never runs on room reserved for a waiting gang", pod.Namespace, ref.Name, err))
			return
		}
		if job.Spec.ActiveDeadlineSeconds != nil {
			bounding = job
		}
	}
	if seconds := accounting.DeadlineFor(bounding, queueDefault, s.acct.Clock().Now()); seconds != nil {
		d.patch = append(d.patch, patchOp{Op: "add", Path: "/spec/activeDeadlineSeconds", Value: *seconds})
	}
}

// namesTakenGang says whether the pod names a PodGroup of another gang API that queue-scheduler takes.
func (s *Server) namesTakenGang(pod *v1.Pod) bool {
	for _, ref := range schedulingv1beta1.GangRefs(pod) {
		if ref.Source != "" && s.gangs(ref.Source) {
			return true
		}
	}
	return false
}

// labelForeignGang gives a pod of queue-scheduler that names a PodGroup of another gang API, and
// none of queue-scheduler's, the pod-group label of that PodGroup's mirror: from then on every part
// of queue-scheduler reads the pod's gang from that one label. A pod naming a source that is not
// taken is scheduled alone, with a warning.
func (s *Server) labelForeignGang(pod *v1.Pod, d *decision) {
	refs := schedulingv1beta1.GangRefs(pod)
	if len(refs) == 0 || refs[0].Source == "" {
		return
	}
	// The rule the scheduler reads an unlabelled pod's gang by, so that both agree.
	if name, ok := schedulingv1beta1.GangOf(pod, s.gangs); ok {
		d.patch = append(d.patch, addLabel(pod, schedulingv1beta1.PodGroupLabel, name))
		if pod.Labels == nil {
			pod.Labels = map[string]string{}
		}
		pod.Labels[schedulingv1beta1.PodGroupLabel] = name
		return
	}
	d.warnings = append(d.warnings, fmt.Sprintf(
		"pod names %s PodGroup %q, whose gangs queue-scheduler does not take (QueueState gangSources): it is scheduled alone, not as a gang",
		refs[0].Source, refs[0].Name))
}

// placedByKubernetes says whether the pod is one a scheduler places: not a pod already on a node (a
// mirror pod) nor a DaemonSet's, which is bound to its node and is no queue's work.
func placedByKubernetes(pod *v1.Pod) bool {
	if pod.Spec.NodeName != "" {
		return false
	}
	for _, ref := range pod.OwnerReferences {
		if ref.Kind == "DaemonSet" && ref.Controller != nil && *ref.Controller {
			return false
		}
	}
	return true
}

// namespaceOf reads a namespace from the cache, else from the API server (one created a moment ago).
func (s *Server) namespaceOf(ctx context.Context, name string) *v1.Namespace {
	if ns, err := s.acct.Store.Namespaces().Get(name); err == nil {
		return ns
	}
	return s.namespace(ctx, name)
}

// namedWork says which queue or PodGroup of queue-scheduler a pod names, or "".
func namedWork(pod *v1.Pod) string {
	if q := pod.Labels[schedulingv1beta1.QueueLabel]; q != "" {
		return fmt.Sprintf("queue %q", q)
	}
	if g := pod.Labels[schedulingv1beta1.PodGroupLabel]; g != "" {
		return fmt.Sprintf("PodGroup %q", g)
	}
	return ""
}

// addLabel adds a label to the pod, creating the labels map when it has none.
func addLabel(pod *v1.Pod, key, value string) patchOp {
	if pod.Labels == nil {
		return patchOp{Op: "add", Path: "/metadata/labels", Value: map[string]string{key: value}}
	}
	escaped := strings.NewReplacer("~", "~0", "/", "~1").Replace(key)
	return patchOp{Op: "add", Path: "/metadata/labels/" + escaped, Value: value}
}
