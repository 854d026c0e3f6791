package readmodel

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/rules"
)

// queuesIf gives the queues as the changes make them: a copy of each changed queue with the fields
// set replaced, the state a changed parent cascades to its children (as the controller cascades
// it), each checked by the rules a Queue's update is; the others as they are.
func (m *Model) queuesIf(changes []visibilityv1beta1.QueueChange) (accounting.QueuesAs, field.ErrorList) {
	var errs field.ErrorList
	changed := map[string]*schedulingv1beta1.Queue{}
	for i, ch := range changes {
		path := field.NewPath("spec", "queues").Index(i)
		q, ok := m.acct.Store.Queue(ch.Name)
		switch {
		case !ok:
			errs = append(errs, field.NotFound(path.Child("name"), ch.Name))
			continue
		case changed[ch.Name] != nil:
			errs = append(errs, field.Duplicate(path.Child("name"), ch.Name))
			continue
		}
		errs = append(errs, checkQueueChange(path, ch)...)
		changed[ch.Name] = applyQueueChange(q, ch)
	}
	as := func(q *schedulingv1beta1.Queue) *schedulingv1beta1.Queue {
		if ch, ok := changed[q.Name]; ok {
			return ch
		}
		return q
	}
	for _, ch := range changes {
		m.cascadeIf(ch.Name, changed, as)
	}
	view := changedView{m.acct.Rules(), as}
	for i, ch := range changes {
		q, ok := changed[ch.Name]
		if !ok {
			continue
		}
		old, _ := m.acct.Store.Queue(ch.Name)
		for _, e := range rules.ValidateQueue(q, old, view) {
			e.Field = fmt.Sprintf("spec.queues[%d].%s", i, strings.TrimPrefix(e.Field, "spec."))
			errs = append(errs, e)
		}
	}
	return as, errs
}

// cascadeIf carries a changed queue's state down to its descendants, as the controller's cascade
// does, into changed.
func (m *Model) cascadeIf(name string, changed map[string]*schedulingv1beta1.Queue, as accounting.QueuesAs) {
	parent, ok := changed[name]
	if !ok {
		return
	}
	for _, child := range m.acct.Store.Children(name) {
		updated, differs := rules.CascadeChild(parent, as(child))
		if !differs {
			continue
		}
		updated.Status.State = updated.Spec.State
		changed[child.Name] = updated
		m.cascadeIf(child.Name, changed, as)
	}
}

// checkQueueChange checks the fields of a change that the Queue's schema bounds.
func checkQueueChange(path *field.Path, ch visibilityv1beta1.QueueChange) field.ErrorList {
	var errs field.ErrorList
	if ch.Weight != nil && (*ch.Weight < 1 || *ch.Weight > maxWhatIfWeight) {
		errs = append(errs, field.Invalid(path.Child("weight"), *ch.Weight, fmt.Sprintf("must be from 1 to %d", maxWhatIfWeight)))
	}
	switch ch.State {
	case "", schedulingv1beta1.QueueStateOpen, schedulingv1beta1.QueueStateClosed, schedulingv1beta1.QueueStateSuspended:
	default:
		errs = append(errs, field.NotSupported(path.Child("state"), ch.State, []schedulingv1beta1.QueueState{
			schedulingv1beta1.QueueStateOpen, schedulingv1beta1.QueueStateClosed, schedulingv1beta1.QueueStateSuspended}))
	}
	errs = append(errs, nonNegative(path.Child("guarantee"), ch.Guarantee)...)
	return append(errs, nonNegative(path.Child("capability"), ch.Capability)...)
}

// nonNegative refuses the negative amounts of list.
func nonNegative(path *field.Path, list v1.ResourceList) field.ErrorList {
	var errs field.ErrorList
	for res, q := range list {
		if q.Sign() < 0 {
			errs = append(errs, field.Invalid(path.Key(string(res)), q.String(), "must not be negative"))
		}
	}
	return errs
}

// applyQueueChange is a copy of q with the fields ch sets replaced; a state takes effect at once,
// in the spec and the status alike.
func applyQueueChange(q *schedulingv1beta1.Queue, ch visibilityv1beta1.QueueChange) *schedulingv1beta1.Queue {
	q = q.DeepCopy()
	if ch.Weight != nil {
		q.Spec.Weight = *ch.Weight
	}
	if ch.Guarantee != nil {
		q.Spec.Guarantee.Resource = ch.Guarantee.DeepCopy()
	}
	if ch.Capability != nil {
		q.Spec.Capability = ch.Capability.DeepCopy()
	}
	if ch.Reclaimable != nil {
		q.Spec.Reclaimable = ch.Reclaimable
	}
	if ch.State != "" {
		q.Spec.State, q.Status.State = ch.State, ch.State
	}
	return q
}

// changedView is the accounting's view of the queues, each as as gives it: the rules judge a change
// on it.
type changedView struct {
	accounting.Rules
	as accounting.QueuesAs
}

func (v changedView) Queue(name string) (*schedulingv1beta1.Queue, bool) {
	q, ok := v.Rules.Queue(name)
	if !ok {
		return nil, false
	}
	return v.as(q), true
}

func (v changedView) Children(name string) []*schedulingv1beta1.Queue {
	children := v.Rules.Children(name)
	out := make([]*schedulingv1beta1.Queue, len(children))
	for i, c := range children {
		out[i] = v.as(c)
	}
	return out
}
