package webhook

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	busv1alpha1 "github.com/queue-scheduler/queue-scheduler/apis/bus/v1alpha1"
	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/webhook/validation"
)

// Paths the webhook configuration points at.
const (
	QueuesPath     = "/validate/queues"
	PodGroupsPath  = "/validate/podgroups"
	QueueUnitsPath = "/validate/queueunits"
	CommandsPath   = "/validate/commands"
	PodsPath       = "/validate/pods"
)

// maxReviewBytes bounds an admission review body.
const maxReviewBytes = 8 << 20

// validator judges one admission request; no errors means allowed.
type validator func(req *admissionv1.AdmissionRequest) (field.ErrorList, error)

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle(QueuesPath, serve(s.validateQueue))
	mux.Handle(PodGroupsPath, serve(s.validatePodGroup))
	mux.Handle(QueueUnitsPath, serve(s.validateQueueUnit))
	mux.Handle(CommandsPath, serve(s.validateCommand))
	mux.Handle(PodsPath, serve(s.validatePod))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	return mux
}

// serve decodes an AdmissionReview, runs validate and writes the verdict.
func serve(validate validator) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, maxReviewBytes))
		review := &admissionv1.AdmissionReview{}
		if err == nil {
			err = json.Unmarshal(body, review)
		}
		if err != nil || review.Request == nil {
			http.Error(w, fmt.Sprintf("bad admission review: %v", err), http.StatusBadRequest)
			return
		}
		review.Response = verdict(review.Request, validate)
		review.Request = nil
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(review)
	})
}

func verdict(req *admissionv1.AdmissionRequest, validate validator) *admissionv1.AdmissionResponse {
	resp := &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
	errs, err := validate(req)
	switch {
	case err != nil:
		resp.Allowed = false
		resp.Result = &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusBadRequest,
			Reason: metav1.StatusReasonBadRequest, Message: err.Error()}
	case len(errs) > 0:
		resp.Allowed = false
		resp.Result = &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusUnprocessableEntity,
			Reason: metav1.StatusReasonInvalid, Message: describe(req, errs)}
	}
	return resp
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

func (s *Server) view() view { return view{s.acct} }

func (s *Server) validateQueue(req *admissionv1.AdmissionRequest) (field.ErrorList, error) {
	old, err := decode[schedulingv1beta1.Queue](req.OldObject.Raw)
	if err != nil {
		return nil, err
	}
	if req.Operation == admissionv1.Delete {
		return validation.ValidateQueueDeletion(old, s.view()), nil
	}
	q, err := decode[schedulingv1beta1.Queue](req.Object.Raw)
	if err != nil || q == nil {
		return nil, err
	}
	return validation.ValidateQueue(q, old, s.view()), nil
}

func (s *Server) validatePodGroup(req *admissionv1.AdmissionRequest) (field.ErrorList, error) {
	pg, err := decode[schedulingv1beta1.PodGroup](req.Object.Raw)
	if err != nil || pg == nil || req.Operation != admissionv1.Create {
		return nil, err
	}
	return validation.AcceptsWork(field.NewPath("spec", "queue"), s.acct.QueueOfPodGroup(pg), false, s.view()), nil
}

func (s *Server) validateQueueUnit(req *admissionv1.AdmissionRequest) (field.ErrorList, error) {
	u, err := decode[schedulingv1beta1.QueueUnit](req.Object.Raw)
	if err != nil || u == nil {
		return nil, err
	}
	old, err := decode[schedulingv1beta1.QueueUnit](req.OldObject.Raw)
	if err != nil {
		return nil, err
	}
	return validation.ValidateQueueUnit(u, old, s.acct.QueueOfQueueUnit(u), s.view()), nil
}

func (s *Server) validateCommand(req *admissionv1.AdmissionRequest) (field.ErrorList, error) {
	cmd, err := decode[busv1alpha1.Command](req.Object.Raw)
	if err != nil || cmd == nil {
		return nil, err
	}
	return validation.ValidateCommand(cmd, s.view()), nil
}

// validatePod admits a new pod of queue-scheduler only into a queue that takes it. A pod that names a
// PodGroup not created yet is admitted: the scheduler holds it until the PodGroup exists. A pod of a
// job queued by a QueueUnit is admitted while its queue closes, as a PodGroup's members are.
func (s *Server) validatePod(req *admissionv1.AdmissionRequest) (field.ErrorList, error) {
	pod, err := decode[v1.Pod](req.Object.Raw)
	if err != nil || pod == nil || req.Operation != admissionv1.Create {
		return nil, err
	}
	pod.Namespace = req.Namespace
	labels := field.NewPath("metadata", "labels")
	if group := pod.Labels[schedulingv1beta1.PodGroupLabel]; group != "" {
		pg, err := s.acct.PodGroups().PodGroups(pod.Namespace).Get(group)
		if err != nil {
			return nil, nil
		}
		return validation.AcceptsWork(labels.Key(schedulingv1beta1.PodGroupLabel), s.acct.QueueOfPodGroup(pg), true, s.view()), nil
	}
	queue, err := s.acct.QueueOf(pod)
	if err != nil {
		return nil, err
	}
	path, joining := labels.Key(schedulingv1beta1.QueueLabel), false
	if pod.Labels[schedulingv1beta1.QueueLabel] == "" {
		path = field.NewPath("metadata", "namespace")
		if s.acct.UnitOf(pod) != nil {
			// A pod of a queued job joins work its queue accepted already.
			path, joining = field.NewPath("metadata", "ownerReferences"), true
		}
	}
	return validation.AcceptsWork(path, queue, joining, s.view()), nil
}
