package visibility

import (
	"context"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
)

// source is a Source of literal values; mu guards them where a test changes them while the feed
// reads.
type source struct {
	mu      sync.Mutex
	queues  []visibilityv1beta1.QueueSummary
	pending []visibilityv1beta1.PendingWorkload
	// askedIn is the namespace of each WhatIf asked.
	askedIn []string
}

func (s *source) QueueSummaries() []visibilityv1beta1.QueueSummary {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]visibilityv1beta1.QueueSummary, len(s.queues))
	for i := range s.queues {
		s.queues[i].DeepCopyInto(&out[i])
	}
	return out
}

func (s *source) QueueSummary(name string) (*visibilityv1beta1.QueueSummary, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.queues {
		if s.queues[i].Name == name {
			return s.queues[i].DeepCopy(), true
		}
	}
	return nil, false
}

func (s *source) PendingInQueue(queue string) ([]visibilityv1beta1.PendingWorkload, bool) {
	if _, ok := s.QueueSummary(queue); !ok {
		return nil, false
	}
	var out []visibilityv1beta1.PendingWorkload
	for _, w := range s.pending {
		if w.Queue == queue {
			out = append(out, w)
		}
	}
	return out, true
}

func (s *source) PendingInNamespace(namespace string) []visibilityv1beta1.PendingWorkload {
	var out []visibilityv1beta1.PendingWorkload
	for _, w := range s.pending {
		if namespace == "" || w.Namespace == namespace {
			out = append(out, w)
		}
	}
	return out
}

func (s *source) OnQueueChange(func(queue string)) error { return nil }

// WhatIf answers with the spec's first queue change as the only queue, and records the namespace.
func (s *source) WhatIf(_ context.Context, namespace string, spec visibilityv1beta1.WhatIfSpec, _ bool) (*visibilityv1beta1.WhatIfStatus, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.askedIn = append(s.askedIn, namespace)
	status := &visibilityv1beta1.WhatIfStatus{}
	for _, ch := range spec.Queues {
		status.Queues = append(status.Queues, visibilityv1beta1.QueueShareChange{Name: ch.Name})
	}
	return status, nil
}

// ForecastSnapshot is the current snapshot, with no nodes.
func (s *source) ForecastSnapshot(context.Context) (*visibilityv1beta1.ForecastSnapshot, error) {
	return &visibilityv1beta1.ForecastSnapshot{ObjectMeta: metav1.ObjectMeta{Name: visibilityv1beta1.CurrentSnapshot}}, nil
}

// started is a feed of source that took its queues as they are.
func started(source Source) *feed {
	f := newFeed(source)
	f.start()
	return f
}

func literal() *source {
	return &source{
		queues: []visibilityv1beta1.QueueSummary{
			{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"team": "ml"}}, Share: "0.500",
				Allocated: v1.ResourceList{v1.ResourceCPU: resource.MustParse("2"), v1.ResourceMemory: resource.MustParse("1Gi")}},
			{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Share: "+Inf"},
		},
		pending: []visibilityv1beta1.PendingWorkload{
			{ObjectMeta: metav1.ObjectMeta{Namespace: "x", Name: "pod.p"}, Queue: "a", PositionInQueue: 1, Reason: "QueueCapability"},
			{ObjectMeta: metav1.ObjectMeta{Namespace: "y", Name: "podgroup.g"}, Queue: "a", PositionInQueue: 2},
		},
	}
}

// Until the caches synced, every read is answered 503: an empty view would say nothing waits.
func TestReadsWaitForTheCaches(t *testing.T) {
	synced := false
	r := reader{source: literal(), synced: func() bool { return synced }}
	ctx := genericapirequest.WithNamespace(context.Background(), "x")
	_, listErr := (&queueSummaries{r, started(r.source)}).List(ctx, nil)
	_, getErr := (&pendingInQueue{r}).Get(ctx, "a", nil)
	_, nsErr := (&pendingWorkloads{r}).List(ctx, nil)
	for what, err := range map[string]error{"list queues": listErr, "a queue's pending work": getErr, "a namespace's pending work": nsErr} {
		if !apierrors.IsServiceUnavailable(err) {
			t.Errorf("%s before the caches synced: %v, want 503", what, err)
		}
	}
	synced = true
	if _, err := (&queueSummaries{r, started(r.source)}).List(ctx, nil); err != nil {
		t.Errorf("list queues once synced: %v", err)
	}
}

// A namespace's list holds that namespace's work only; a name is found in its namespace only; a
// missing queue is NotFound; label selectors select queues.
func TestReadsKeepToTheirScope(t *testing.T) {
	r := reader{source: literal(), synced: func() bool { return true }}
	ns := func(name string) context.Context {
		return genericapirequest.WithNamespace(context.Background(), name)
	}
	obj, err := (&pendingWorkloads{r}).List(ns("x"), nil)
	if list := obj.(*visibilityv1beta1.PendingWorkloadList); err != nil || len(list.Items) != 1 || list.Items[0].Name != "pod.p" {
		t.Errorf("namespace x: %v, %v; want pod.p alone", obj, err)
	}
	if _, err := (&pendingWorkloads{r}).Get(ns("x"), "podgroup.g", nil); !apierrors.IsNotFound(err) {
		t.Errorf("another namespace's work by name: %v, want NotFound", err)
	}
	if _, err := (&pendingInQueue{r}).Get(ns(""), "gone", nil); !apierrors.IsNotFound(err) {
		t.Errorf("a missing queue's pending work: %v, want NotFound", err)
	}
	selector := labels.SelectorFromSet(labels.Set{"team": "ml"})
	obj, err = (&queueSummaries{r, started(r.source)}).List(ns(""), &metainternalversion.ListOptions{LabelSelector: selector})
	if list := obj.(*visibilityv1beta1.QueueSummaryList); err != nil || len(list.Items) != 1 || list.Items[0].Name != "a" {
		t.Errorf("queues with team=ml: %v, %v; want a alone", obj, err)
	}
}

// kubectl get prints a row a queue or a piece of work, with the resources written out.
func TestTables(t *testing.T) {
	s := literal()
	queues := append([]visibilityv1beta1.QueueSummary(nil), s.queues...)
	queues[0].Usage = v1.ResourceList{v1.ResourceCPU: resource.MustParse("7200")}
	queues[0].EffectiveWeight = v1.ResourceList{v1.ResourceCPU: resource.MustParse("750m")}
	table, err := queueSummaryTable(&visibilityv1beta1.QueueSummaryList{Items: queues})
	if err != nil || len(table.Rows) != 2 || table.Rows[0].Cells[4] != "0.500" || table.Rows[0].Cells[5] != "cpu=2,memory=1Gi" ||
		table.Rows[0].Cells[10] != "cpu 2.0 core-h" || table.Rows[0].Cells[11] != "cpu=750m" || len(table.ColumnDefinitions) != len(table.Rows[0].Cells) {
		t.Errorf("queue table: %+v, %v", table, err)
	}
	table, err = pendingWorkloadTable(&s.pending[0])
	if err != nil || len(table.Rows) != 1 || table.Rows[0].Cells[2] != int32(1) || table.Rows[0].Cells[6] != "QueueCapability" {
		t.Errorf("pending table: %+v, %v", table, err)
	}
	if _, err := pendingWorkloadTable(&metav1.Status{}); err == nil {
		t.Error("a table of an object the view does not serve")
	}
}

// A WhatIf is answered about the namespace of the request, whatever its object says, and returned
// with its status; one asked in no namespace is a bad request, and one before the caches synced 503.
func TestWhatIfIsAnsweredAboutTheRequestsNamespace(t *testing.T) {
	synced := false
	src := literal()
	w := &whatIfs{reader: reader{source: src, synced: func() bool { return synced }}}
	ask := &visibilityv1beta1.WhatIf{ObjectMeta: metav1.ObjectMeta{Namespace: "y"},
		Spec: visibilityv1beta1.WhatIfSpec{Queues: []visibilityv1beta1.QueueChange{{Name: "a"}}}}
	inX := genericapirequest.WithNamespace(context.Background(), "x")
	if _, err := w.Create(inX, ask, nil, nil); !apierrors.IsServiceUnavailable(err) {
		t.Errorf("before the caches synced: %v, want 503", err)
	}
	synced = true
	if _, err := w.Create(context.Background(), ask, nil, nil); !apierrors.IsBadRequest(err) {
		t.Errorf("in no namespace: %v, want a bad request", err)
	}
	obj, err := w.Create(inX, ask, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := obj.(*visibilityv1beta1.WhatIf)
	if got.Namespace != "x" || len(got.Status.Queues) != 1 || got.Status.Queues[0].Name != "a" {
		t.Errorf("answer %+v; want namespace x and the queue a", got)
	}
	if len(src.askedIn) != 1 || src.askedIn[0] != "x" {
		t.Errorf("asked in %v, want [x]", src.askedIn)
	}
}

// The one ForecastSnapshot is "current": any other name is not found, and none is served before
// the caches synced.
func TestOnlyTheCurrentForecastSnapshotIsFound(t *testing.T) {
	synced := false
	s := &forecastSnapshots{reader{source: literal(), synced: func() bool { return synced }}}
	if _, err := s.Get(context.Background(), visibilityv1beta1.CurrentSnapshot, nil); !apierrors.IsServiceUnavailable(err) {
		t.Errorf("before the caches synced: %v, want 503", err)
	}
	synced = true
	if _, err := s.Get(context.Background(), "yesterday", nil); !apierrors.IsNotFound(err) {
		t.Errorf("another name: %v, want not found", err)
	}
	obj, err := s.Get(context.Background(), visibilityv1beta1.CurrentSnapshot, nil)
	if err != nil || obj.(*visibilityv1beta1.ForecastSnapshot).Name != visibilityv1beta1.CurrentSnapshot {
		t.Errorf("current: %+v, %v", obj, err)
	}
}
