package rules

import (
	"testing"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// A parent's requested state reaches its children: Closed closes each, Suspended suspends the Open
// ones, and Open restores what the cascade changed, and only that.
func TestCascadeChild(t *testing.T) {
	const (
		open      = schedulingv1beta1.QueueStateOpen
		closed    = schedulingv1beta1.QueueStateClosed
		suspended = schedulingv1beta1.QueueStateSuspended
	)
	cascaded := func(w *util.QueueWrapper, parent string, before schedulingv1beta1.QueueState) *schedulingv1beta1.Queue {
		q := w.Obj()
		q.Annotations = map[string]string{CascadedByAnnotation: parent, StateBeforeCascadeAnnotation: string(before)}
		return q
	}
	tests := []struct {
		name        string
		parent      *schedulingv1beta1.Queue
		child       *schedulingv1beta1.Queue
		wantState   schedulingv1beta1.QueueState
		wantBefore  string
		wantChanged bool
	}{
		{name: "close closes an open child", parent: util.MakeQueue("p").State(closed).Obj(), child: util.MakeQueue("c").State(open).Obj(),
			wantState: closed, wantBefore: "Open", wantChanged: true},
		{name: "close closes a suspended child", parent: util.MakeQueue("p").State(closed).Obj(), child: util.MakeQueue("c").State(suspended).Obj(),
			wantState: closed, wantBefore: "Suspended", wantChanged: true},
		{name: "close leaves a closed child", parent: util.MakeQueue("p").State(closed).Obj(), child: util.MakeQueue("c").State(closed).Obj(),
			wantState: closed},
		{name: "suspend suspends an open child", parent: util.MakeQueue("p").State(suspended).Obj(), child: util.MakeQueue("c").State(open).Obj(),
			wantState: suspended, wantBefore: "Open", wantChanged: true},
		{name: "suspend leaves a closed child", parent: util.MakeQueue("p").State(suspended).Obj(), child: util.MakeQueue("c").State(closed).Obj(),
			wantState: closed},
		{name: "suspend leaves a child suspended by its owner", parent: util.MakeQueue("p").State(suspended).Obj(), child: util.MakeQueue("c").State(suspended).Obj(),
			wantState: suspended},
		{name: "close after suspend keeps the first state", parent: util.MakeQueue("p").State(closed).Obj(),
			child: cascaded(util.MakeQueue("c").State(suspended), "p", open), wantState: closed, wantBefore: "Open", wantChanged: true},
		{name: "open restores what the cascade changed", parent: util.MakeQueue("p").State(open).Obj(),
			child: cascaded(util.MakeQueue("c").State(closed), "p", suspended), wantState: suspended, wantChanged: true},
		{name: "open leaves what it did not change", parent: util.MakeQueue("p").State(open).Obj(),
			child: util.MakeQueue("c").State(closed).Obj(), wantState: closed},
		{name: "open leaves another parent's cascade", parent: util.MakeQueue("p").State(open).Obj(),
			child: cascaded(util.MakeQueue("c").State(closed), "other", open), wantState: closed, wantBefore: "Open"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, changed := CascadeChild(tt.parent, tt.child)
			if changed != tt.wantChanged || got.Spec.State != tt.wantState {
				t.Fatalf("got state %s changed %v, want %s %v", got.Spec.State, changed, tt.wantState, tt.wantChanged)
			}
			if before := got.Annotations[StateBeforeCascadeAnnotation]; before != tt.wantBefore {
				t.Errorf("state before cascade: got %q, want %q", before, tt.wantBefore)
			}
		})
	}
}
