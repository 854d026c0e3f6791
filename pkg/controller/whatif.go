package controller

import (
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	quota "k8s.io/apiserver/pkg/quota/v1"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/forecast"
	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
	"github.com/queue-scheduler/queue-scheduler/pkg/rules"
)

// Bounds of a WhatIf: what one may ask to be played.
const (
	// maxWhatIfPods is the most pods the new workloads of one WhatIf run, all together.
	maxWhatIfPods = 10000
	// maxWhatIfWeight is the largest weight a queue takes (the Queue CRD's bound).
	maxWhatIfWeight = 65535
)

// WhatIf answers a WhatIf about namespace: the fair shares of every queue and the expected starts
// of the namespace's pending work, as they are and as they would be with spec, both played on one
// snapshot of the caches. Nothing is written, and the scheduler's own shares and forecast are left
// as they are. A spec that could not be made (an unknown queue, a change the Queue's rules refuse,
// a workload of no pods) is Invalid, naming the field.
func (c *Controller) WhatIf(namespace string, spec visibilityv1beta1.WhatIfSpec) (*visibilityv1beta1.WhatIfStatus, error) {
	as, errs := c.queuesIf(spec.Queues)
	works, more, workErrs := c.newWorkloads(namespace, spec.Workloads, changedView{c.acct, as})
	if errs = append(errs, workErrs...); len(errs) > 0 {
		return nil, apierrors.NewInvalid(visibilityv1beta1.SchemeGroupVersion.WithKind("WhatIf").GroupKind(), "", errs)
	}
	now := c.acct.Clock().Now()
	in := c.forecastInput(now, more)
	then := *in.snap
	then.Queues = forecastQueues(in.queues, as)
	then.Pending = slices.Clone(in.snap.Pending)
	extra := map[string]v1.ResourceList{}
	for _, w := range works {
		if w.refused != "" {
			continue
		}
		runtime := boundedRuntime(c.runtimeOf(w.queue, w.kind, now), w.pods[:1])
		for _, work := range w.forecastWork(in) {
			work.Runtime = runtime
			then.Pending = append(then.Pending, work)
		}
		extra[w.queue] = quota.Add(extra[w.queue], w.requests)
	}
	status := &visibilityv1beta1.WhatIfStatus{ForecastTime: metav1.NewTime(now)}
	status.Queues = c.sharesIf(in.queues, as, extra)
	before := expectedStarts{byKey: forecast.Predict(in.snap, forecastSettings), at: now}
	after := expectedStarts{byKey: forecast.Predict(&then, forecastSettings), at: now}
	for _, w := range in.pending {
		if w.item.Namespace == namespace {
			key := forecastKey(w)
			status.Workloads = append(status.Workloads, visibilityv1beta1.WorkloadStartChange{
				Workload: w.item.Workload, Queue: w.item.Queue, Start: before.of(key), StartIf: after.of(key)})
		}
	}
	for _, w := range works {
		change := visibilityv1beta1.WorkloadStartChange{Workload: visibilityv1beta1.WorkloadReference{
			Kind: visibilityv1beta1.WorkloadNew, Name: w.name}, Queue: w.queue, Refused: w.refused}
		if w.refused == "" {
			change.StartIf = w.startOf(after)
		}
		status.Workloads = append(status.Workloads, change)
	}
	return status, nil
}

// sharesIf is every queue's fair share now and with the change: the queues as as gives them, asking
// for extra beside their demand.
func (c *Controller) sharesIf(queues []*schedulingv1beta1.Queue, as accounting.QueuesAs, extra map[string]v1.ResourceList) []visibilityv1beta1.QueueShareChange {
	now, then := c.acct.DeservedIf(nil, nil), c.acct.DeservedIf(as, extra)
	out := make([]visibilityv1beta1.QueueShareChange, 0, len(queues))
	for _, q := range queues {
		held := c.acct.Usage(q.Name).Allocated
		out = append(out, visibilityv1beta1.QueueShareChange{Name: q.Name, Deserved: now[q.Name], DeservedIf: then[q.Name],
			Share: shareString(policy.DominantShare(held, now[q.Name])), ShareIf: shareString(policy.DominantShare(held, then[q.Name]))})
	}
	slices.SortFunc(out, func(a, b visibilityv1beta1.QueueShareChange) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// queuesIf gives the queues as the changes make them: a copy of each changed queue with the fields
// set replaced, checked by the rules a Queue's update is; the others as they are.
func (c *Controller) queuesIf(changes []visibilityv1beta1.QueueChange) (accounting.QueuesAs, field.ErrorList) {
	var errs field.ErrorList
	changed := map[string]*schedulingv1beta1.Queue{}
	for i, ch := range changes {
		path := field.NewPath("spec", "queues").Index(i)
		q, ok := c.acct.Queue(ch.Name)
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
	view := changedView{c.acct, as}
	for i, ch := range changes {
		if q, ok := changed[ch.Name]; ok && len(errs) == 0 {
			old, _ := c.acct.Queue(ch.Name)
			for _, e := range rules.ValidateQueue(q, old, view) {
				e.Detail = fmt.Sprintf("spec.queues[%d] (queue %q): %s", i, ch.Name, e.Detail)
				errs = append(errs, e)
			}
		}
	}
	return as, errs
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
	for _, list := range []struct {
		name string
		rl   v1.ResourceList
	}{{"guarantee", ch.Guarantee}, {"capability", ch.Capability}} {
		for res, q := range list.rl {
			if q.Sign() < 0 {
				errs = append(errs, field.Invalid(path.Child(list.name).Key(string(res)), q.String(), "must not be negative"))
			}
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
	*accounting.Accounting
	as accounting.QueuesAs
}

func (v changedView) Queue(name string) (*schedulingv1beta1.Queue, bool) {
	q, ok := v.Accounting.Queue(name)
	if !ok {
		return nil, false
	}
	return v.as(q), true
}
