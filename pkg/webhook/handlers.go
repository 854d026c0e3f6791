package webhook

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"

	admissionv1 "k8s.io/api/admission/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	busv1alpha1 "github.com/queue-scheduler/queue-scheduler/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/metrics"
	"github.com/queue-scheduler/queue-scheduler/pkg/rules"
)

// Paths the webhook configurations point at.
const (
	QueuesPath     = "/validate/queues"
	PodGroupsPath  = "/validate/podgroups"
	QueueUnitsPath = "/validate/queueunits"
	CommandsPath   = "/validate/commands"
	PodsPath       = "/validate/pods"
	JobsPath       = "/validate/jobs"
	MutatePodsPath = "/mutate/pods"
)

// maxReviewBytes bounds an admission review body.
const maxReviewBytes = 8 << 20

// decision is the verdict on one admission request: no errors means allowed, with the patch and the
// warnings, if any.
type decision struct {
	errs     field.ErrorList
	patch    []patchOp
	warnings []string
}

// reviewer judges one admission request.
type reviewer func(ctx context.Context, req *admissionv1.AdmissionRequest) (decision, error)

// validator is a reviewer that only allows or refuses.
type validator func(ctx context.Context, req *admissionv1.AdmissionRequest) (field.ErrorList, error)

func validating(v validator) reviewer {
	return func(ctx context.Context, req *admissionv1.AdmissionRequest) (decision, error) {
		errs, err := v(ctx, req)
		return decision{errs: errs}, err
	}
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle(QueuesPath, serve(s.reviewQueue))
	mux.Handle(PodGroupsPath, serve(validating(s.validatePodGroup)))
	mux.Handle(QueueUnitsPath, serve(validating(s.validateQueueUnit)))
	mux.Handle(CommandsPath, serve(validating(s.validateCommand)))
	mux.Handle(PodsPath, serve(s.validatePod))
	mux.Handle(JobsPath, serve(s.validateJob))
	mux.Handle(MutatePodsPath, serve(s.mutatePod))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	return mux
}

// serve decodes an AdmissionReview, runs review and writes the verdict.
func serve(review reviewer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, maxReviewBytes))
		ar := &admissionv1.AdmissionReview{}
		if err == nil {
			err = json.Unmarshal(body, ar)
		}
		if err != nil || ar.Request == nil {
			http.Error(w, fmt.Sprintf("bad admission review: %v", err), http.StatusBadRequest)
			return
		}
		ar.Response = verdict(r.Context(), ar.Request, review)
		ar.Request = nil
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(ar)
	})
}

func verdict(ctx context.Context, req *admissionv1.AdmissionRequest, review reviewer) *admissionv1.AdmissionResponse {
	resp := &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
	d, err := review(ctx, req)
	switch {
	case err != nil:
		resp.Allowed = false
		resp.Result = &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusBadRequest,
			Reason: metav1.StatusReasonBadRequest, Message: err.Error()}
	case len(d.errs) > 0:
		countRefusal(req, d.errs)
		resp.Allowed = false
		resp.Result = &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusUnprocessableEntity,
			Reason: metav1.StatusReasonInvalid, Message: describe(req, d.errs)}
	default:
		resp.Warnings = d.warnings
		if len(d.patch) > 0 {
			patch, err := json.Marshal(d.patch)
			if err != nil {
				return verdict(ctx, req, func(context.Context, *admissionv1.AdmissionRequest) (decision, error) { return decision{}, err })
			}
			resp.Patch, resp.PatchType = patch, ptr.To(admissionv1.PatchTypeJSONPatch)
		}
	}
	return resp
}

// subscripts are the map keys and list indexes of a field path: left out of the refusal's rule label,
// which must not grow with what users write.
var subscripts = regexp.MustCompile(`\[[^\]]*\]`)

// countRefusal counts a refused request by the kind of object and the first rule it broke, named by
// the field that rule checks.
func countRefusal(req *admissionv1.AdmissionRequest, errs field.ErrorList) {
	metrics.AdmissionRefusals.WithLabelValues(req.Kind.Kind, subscripts.ReplaceAllString(errs[0].Field, "")).Inc()
}

// describe names the object and lists the broken rules with their fields.
func describe(req *admissionv1.AdmissionRequest, errs field.ErrorList) string {
	name := req.Name
	if req.Namespace != "" {
		name = req.Namespace + "/" + req.Name
	}
	return fmt.Sprintf("%s %q: %s", req.Kind.Kind, name, errs.ToAggregate().Error())
}

func decode[T any](raw []byte) (*T, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	obj := new(T)
	if err := json.Unmarshal(raw, obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// reviewQueue judges a queue's change, and warns of a leaf queue created (or left) with no namespace
// selector: legal, as a queue may be opened to namespaces later, but rarely what its author meant.
func (s *Server) reviewQueue(ctx context.Context, req *admissionv1.AdmissionRequest) (decision, error) {
	errs, err := s.validateQueue(ctx, req)
	if err != nil || len(errs) > 0 || req.Operation == admissionv1.Delete {
		return decision{errs: errs}, err
	}
	q, err := decode[schedulingv1beta1.Queue](req.Object.Raw)
	if err != nil || q == nil || q.Spec.NamespaceSelector != nil || q.Name == schedulingv1beta1.RootQueue || len(s.acct.Store.Children(q.Name)) > 0 {
		return decision{}, err
	}
	if old, err := decode[schedulingv1beta1.Queue](req.OldObject.Raw); err != nil || (old != nil && old.Spec.NamespaceSelector == nil) {
		return decision{}, err // warned of when it was created
	}
	return decision{warnings: []string{fmt.Sprintf(
		"queue %q has no spec.namespaceSelector: it accepts work from no namespace; set namespaceSelector: {} for every namespace, or matchLabels for some (kubectl queue update %s --namespaces SELECTOR, or --all-namespaces)",
		q.Name, q.Name)}}, nil
}

// validateQueue judges a queue's change against the tree as the API server holds it: the tree's rules
// span queues, and two changes a moment apart must not both pass on a cache that saw neither.
func (s *Server) validateQueue(ctx context.Context, req *admissionv1.AdmissionRequest) (field.ErrorList, error) {
	old, err := decode[schedulingv1beta1.Queue](req.OldObject.Raw)
	if err != nil {
		return nil, err
	}
	q, err := decode[schedulingv1beta1.Queue](req.Object.Raw)
	if err != nil || (q == nil && req.Operation != admissionv1.Delete) {
		return nil, err
	}
	live, err := s.live(ctx)
	if err != nil {
		return nil, err
	}
	if req.Operation == admissionv1.Delete {
		return rules.ValidateQueueDeletion(old, live), nil
	}
	return rules.ValidateQueue(q, old, live), nil
}

func (s *Server) validatePodGroup(ctx context.Context, req *admissionv1.AdmissionRequest) (field.ErrorList, error) {
	pg, err := decode[schedulingv1beta1.PodGroup](req.Object.Raw)
	if err != nil || pg == nil || req.Operation != admissionv1.Create {
		return nil, err
	}
	pg.Namespace = req.Namespace
	queue := s.acct.Store.QueueOfPodGroup(pg)
	return s.judge(ctx, func(v rules.View) field.ErrorList {
		if errs := rules.AcceptsWork(field.NewPath("spec", "queue"), queue, pg.Namespace, false, v); len(errs) > 0 {
			return errs
		}
		return rules.FitsCapability(field.NewPath("spec", "minResources"), pg.Spec.MinResources, queue, v)
	})
}

func (s *Server) validateQueueUnit(ctx context.Context, req *admissionv1.AdmissionRequest) (field.ErrorList, error) {
	u, err := decode[schedulingv1beta1.QueueUnit](req.Object.Raw)
	if err != nil || u == nil {
		return nil, err
	}
	old, err := decode[schedulingv1beta1.QueueUnit](req.OldObject.Raw)
	if err != nil {
		return nil, err
	}
	u.Namespace = req.Namespace
	queue := s.acct.Store.QueueOfQueueUnit(u)
	return s.judge(ctx, func(v rules.View) field.ErrorList { return rules.ValidateQueueUnit(u, old, queue, v) })
}

func (s *Server) validateCommand(ctx context.Context, req *admissionv1.AdmissionRequest) (field.ErrorList, error) {
	cmd, err := decode[busv1alpha1.Command](req.Object.Raw)
	if err != nil || cmd == nil {
		return nil, err
	}
	cmd.Namespace = req.Namespace
	return s.judge(ctx, func(v rules.View) field.ErrorList { return rules.ValidateCommand(cmd, s.adminNamespace, v) })
}

// validatePod admits a new pod of queue-scheduler only into a queue that takes it and whose
// capability its request fits, and keeps a pod's queue label, decided at admission, from changing.
func (s *Server) validatePod(ctx context.Context, req *admissionv1.AdmissionRequest) (decision, error) {
	pod, err := decode[v1.Pod](req.Object.Raw)
	if err != nil || pod == nil {
		return decision{}, err
	}
	pod.Namespace = req.Namespace
	if req.Operation == admissionv1.Update {
		old, err := decode[v1.Pod](req.OldObject.Raw)
		if err != nil || old == nil {
			return decision{}, err
		}
		return decision{errs: rules.ValidateQueueLabelUnchanged(pod, old)}, nil
	}
	if req.Operation != admissionv1.Create {
		return decision{}, nil
	}
	return s.judgeNewPod(ctx, pod, nil)
}

// validateJob judges a new batch/v1 Job of queue-scheduler by its pod template, as its pods will be
// judged: a Job whose pods would all be refused is refused itself, where its author sees it, rather
// than leaving only FailedCreate events on the Job.
func (s *Server) validateJob(ctx context.Context, req *admissionv1.AdmissionRequest) (decision, error) {
	job, err := decode[batchv1.Job](req.Object.Raw)
	if err != nil || job == nil || req.Operation != admissionv1.Create {
		return decision{}, err
	}
	job.Namespace = req.Namespace
	pod := schedulingv1beta1.JobTemplatePod(job)
	pod.OwnerReferences = append(slices.Clone(job.OwnerReferences), metav1.OwnerReference{
		APIVersion: batchv1.SchemeGroupVersion.String(), Kind: "Job", Name: job.Name, Controller: ptr.To(true)})
	var nsLabels map[string]string
	if ns := s.namespaceOf(ctx, job.Namespace); ns != nil {
		nsLabels = ns.Labels
	}
	if !schedulingv1beta1.SchedulesJobPods(job, nsLabels) {
		if namedWork(pod) == "" {
			return decision{}, nil
		}
		return decision{warnings: []string{fmt.Sprintf(
			"the Job's pods name %s but spec.template.spec.schedulerName %q: queue-scheduler does not schedule them and no queue counts them; set spec.template.spec.schedulerName: %s",
			namedWork(pod), job.Spec.Template.Spec.SchedulerName, schedulingv1beta1.SchedulerName)}}, nil
	}
	d, err := s.judgeNewPod(ctx, pod, field.NewPath("spec", "template"))
	if err == nil && len(d.errs) > 0 && ptr.Deref(job.Spec.Suspend, false) && s.acct.Store.UnitOf(pod) == nil {
		// A suspended Job is how a job waits for its QueueUnit, which may come a moment later
		// (kubectl apply of one file) and decide another queue: its pods are judged when they are
		// created, once the unit has dequeued it.
		d = decision{warnings: []string{"a QueueUnit created for this suspended Job decides its queue; without one its pods would be refused: " +
			d.errs.ToAggregate().Error()}}
	}
	return d, err
}

// judgeNewPod judges a new pod (or a Job's pod template, under root) by rules.JudgeNewPod, on the
// caches and, to confirm a refusal, on what the API server holds.
func (s *Server) judgeNewPod(ctx context.Context, pod *v1.Pod, root *field.Path) (decision, error) {
	var verdict rules.PodVerdict
	var judged error
	errs, err := s.judge(ctx, func(v rules.View) field.ErrorList {
		verdict, judged = rules.JudgeNewPod(pod, root, s.podGroupReader(ctx), s.acct.Rules(), v)
		return verdict.Errs
	})
	if err = cmp.Or(err, judged); err != nil {
		return decision{}, err
	}
	d := decision{errs: errs}
	if verdict.Warning != "" {
		d.warnings = []string{verdict.Warning}
	}
	return d, nil
}
