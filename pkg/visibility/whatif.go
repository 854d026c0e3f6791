package visibility

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
)

// whatIfs serves WhatIf, namespaced, create only: a created WhatIf is answered in its status and
// returned, and never stored, as a SubjectAccessReview is. Who may create one in a namespace may
// ask about that namespace's work, and about nothing of another's; about the queues that take its
// work, unless it may read every queue (list queuesummaries), which authz says.
type whatIfs struct {
	reader
	authz authorizer.Authorizer
}

var (
	_ rest.Creater              = &whatIfs{} //nolint:misspell // the apiserver's name
	_ rest.Scoper               = &whatIfs{}
	_ rest.SingularNameProvider = &whatIfs{}
)

func (*whatIfs) New() runtime.Object     { return &visibilityv1beta1.WhatIf{} }
func (*whatIfs) Destroy()                {}
func (*whatIfs) NamespaceScoped() bool   { return true }
func (*whatIfs) GetSingularName() string { return "whatif" }

func (w *whatIfs) Create(ctx context.Context, obj runtime.Object, validate rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	if err := w.ready(); err != nil {
		return nil, err
	}
	in, ok := obj.(*visibilityv1beta1.WhatIf)
	if !ok {
		return nil, apierrors.NewBadRequest("not a WhatIf")
	}
	namespace := genericapirequest.NamespaceValue(ctx)
	if namespace == "" {
		return nil, apierrors.NewBadRequest("a WhatIf is asked in a namespace: the one whose work it is about")
	}
	if validate != nil {
		if err := validate(ctx, obj); err != nil {
			return nil, err
		}
	}
	status, err := w.source.WhatIf(ctx, namespace, in.Spec, w.readsEveryQueue(ctx))
	if err != nil {
		return nil, err
	}
	out := in.DeepCopy()
	out.Namespace = namespace
	out.Status = *status
	return out, nil
}

// readsEveryQueue says whether the request's user may list queuesummaries: read every queue's share.
func (w *whatIfs) readsEveryQueue(ctx context.Context) bool {
	user, ok := genericapirequest.UserFrom(ctx)
	if !ok || w.authz == nil {
		return false
	}
	decision, _, err := w.authz.Authorize(ctx, authorizer.AttributesRecord{User: user, Verb: "list", APIGroup: visibilityv1beta1.GroupName,
		APIVersion: visibilityv1beta1.SchemeGroupVersion.Version, Resource: visibilityv1beta1.QueueSummaries, ResourceRequest: true})
	return err == nil && decision == authorizer.DecisionAllow
}
