package visibility

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
)

// reader reads the source once its caches synced.
type reader struct {
	source Source
	synced func() bool
}

// ready answers 503 until the caches synced: an empty view would say that nothing waits.
func (r reader) ready() error {
	if !r.synced() {
		return apierrors.NewServiceUnavailable("the scheduler's caches have not synced yet")
	}
	return nil
}

// selects says whether an object's labels and name match the list options.
func selects(opts *metainternalversion.ListOptions, meta metav1.ObjectMeta) bool {
	if opts == nil {
		return true
	}
	if opts.LabelSelector != nil && !opts.LabelSelector.Matches(labels.Set(meta.Labels)) {
		return false
	}
	return opts.FieldSelector == nil || opts.FieldSelector.Matches(fields.Set{
		"metadata.name": meta.Name, "metadata.namespace": meta.Namespace})
}

// queueSummaries serves QueueSummary: get, list and watch, cluster-scoped, from the feed, which
// holds each queue's summary as of its last change and sends each change as it happens.
type queueSummaries struct {
	reader
	feed *feed
}

var (
	_ rest.Getter               = &queueSummaries{}
	_ rest.Lister               = &queueSummaries{}
	_ rest.Watcher              = &queueSummaries{}
	_ rest.Scoper               = &queueSummaries{}
	_ rest.SingularNameProvider = &queueSummaries{}
)

func (*queueSummaries) New() runtime.Object     { return &visibilityv1beta1.QueueSummary{} }
func (*queueSummaries) NewList() runtime.Object { return &visibilityv1beta1.QueueSummaryList{} }
func (*queueSummaries) Destroy()                {}
func (*queueSummaries) NamespaceScoped() bool   { return false }
func (*queueSummaries) GetSingularName() string { return "queuesummary" }

func (s *queueSummaries) Get(_ context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	if err := s.ready(); err != nil {
		return nil, err
	}
	summary, ok := s.feed.get(name)
	if !ok {
		return nil, apierrors.NewNotFound(visibilityv1beta1.Resource(visibilityv1beta1.QueueSummaries), name)
	}
	return summary, nil
}

func (s *queueSummaries) List(_ context.Context, opts *metainternalversion.ListOptions) (runtime.Object, error) {
	if err := s.ready(); err != nil {
		return nil, err
	}
	return s.feed.list(opts), nil
}

func (s *queueSummaries) Watch(_ context.Context, opts *metainternalversion.ListOptions) (watch.Interface, error) {
	if err := s.ready(); err != nil {
		return nil, err
	}
	return s.feed.watch(opts)
}

func (*queueSummaries) ConvertToTable(_ context.Context, obj runtime.Object, _ runtime.Object) (*metav1.Table, error) {
	return queueSummaryTable(obj)
}

// pendingInQueue serves the pendingworkloads subresource of a QueueSummary: the queue's pending
// work in every namespace.
type pendingInQueue struct{ reader }

var (
	_ rest.Getter = &pendingInQueue{}
	_ rest.Scoper = &pendingInQueue{}
)

func (*pendingInQueue) New() runtime.Object   { return &visibilityv1beta1.PendingWorkloadList{} }
func (*pendingInQueue) Destroy()              {}
func (*pendingInQueue) NamespaceScoped() bool { return false }

func (p *pendingInQueue) Get(_ context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	if err := p.ready(); err != nil {
		return nil, err
	}
	pending, ok := p.source.PendingInQueue(name)
	if !ok {
		return nil, apierrors.NewNotFound(visibilityv1beta1.Resource(visibilityv1beta1.QueueSummaries), name)
	}
	return &visibilityv1beta1.PendingWorkloadList{Items: pending}, nil
}

// pendingWorkloads serves PendingWorkload: a namespace's pending work (every namespace's when the
// request names none), get and list.
type pendingWorkloads struct{ reader }

var (
	_ rest.Getter               = &pendingWorkloads{}
	_ rest.Lister               = &pendingWorkloads{}
	_ rest.Scoper               = &pendingWorkloads{}
	_ rest.SingularNameProvider = &pendingWorkloads{}
)

func (*pendingWorkloads) New() runtime.Object     { return &visibilityv1beta1.PendingWorkload{} }
func (*pendingWorkloads) NewList() runtime.Object { return &visibilityv1beta1.PendingWorkloadList{} }
func (*pendingWorkloads) Destroy()                {}
func (*pendingWorkloads) NamespaceScoped() bool   { return true }
func (*pendingWorkloads) GetSingularName() string { return "pendingworkload" }

func (p *pendingWorkloads) Get(ctx context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	if err := p.ready(); err != nil {
		return nil, err
	}
	for _, w := range p.source.PendingInNamespace(genericapirequest.NamespaceValue(ctx)) {
		if w.Name == name {
			return &w, nil
		}
	}
	return nil, apierrors.NewNotFound(visibilityv1beta1.Resource(visibilityv1beta1.PendingWorkloads), name)
}

func (p *pendingWorkloads) List(ctx context.Context, opts *metainternalversion.ListOptions) (runtime.Object, error) {
	if err := p.ready(); err != nil {
		return nil, err
	}
	list := &visibilityv1beta1.PendingWorkloadList{}
	for _, w := range p.source.PendingInNamespace(genericapirequest.NamespaceValue(ctx)) {
		if selects(opts, w.ObjectMeta) {
			list.Items = append(list.Items, w)
		}
	}
	return list, nil
}

func (*pendingWorkloads) ConvertToTable(_ context.Context, obj runtime.Object, _ runtime.Object) (*metav1.Table, error) {
	return pendingWorkloadTable(obj)
}
