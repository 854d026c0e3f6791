package readmodel

import (
	"context"
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

var whatIfKind = visibilityv1beta1.SchemeGroupVersion.WithKind("WhatIf").GroupKind()

// WhatIf answers a WhatIf about namespace: the fair shares of the queues that take the namespace's
// work (with their ancestors, and the queues the change names), of every queue for one who may read
// every queue (allQueues), and the expected starts of the namespace's pending work, as they are and
// as they would be with spec, both played on one snapshot of the caches. Nothing is written, and the
// scheduler's own shares and forecast are left as they are. A spec that could not be made (an
// unknown queue, a change the Queue's rules refuse, a workload of no pods) is Invalid, naming the
// field; without allQueues, a change may name only the queues the namespace's answer holds. One
// WhatIf or ForecastSnapshot is answered at a time, in the order they came (forecastTurns).
func (m *Model) WhatIf(ctx context.Context, namespace string, spec visibilityv1beta1.WhatIfSpec, allQueues bool) (*visibilityv1beta1.WhatIfStatus, error) {
	release, err := m.forecast.turns.take(ctx, forecastTurnWait)
	if err != nil {
		return nil, err
	}
	defer release()
	var errs field.ErrorList
	if !allQueues {
		errs = m.queuesOutOfReach(namespace, spec.Queues)
	}
	as, queueErrs := m.queuesIf(spec.Queues)
	errs = append(errs, queueErrs...)
	works, workErrs := m.newWorkloads(namespace, spec.Workloads, changedView{m.acct.Rules(), as})
	if errs = append(errs, workErrs...); len(errs) > 0 {
		return nil, apierrors.NewInvalid(whatIfKind, "", errs)
	}
	now := m.acct.Clock().Now()
	var more []v1.ResourceName
	for _, w := range works {
		more = append(more, quota.ResourceNames(w.requests)...)
	}
	in := m.forecastInput(now, more)
	then := *in.snap
	then.Queues = forecastQueues(in.queues, as)
	then.Pending = slices.Clone(in.snap.Pending)
	extra := map[string]v1.ResourceList{}
	for _, w := range works {
		if w.refused != "" {
			continue
		}
		extra[w.queue] = quota.Add(extra[w.queue], w.requests)
		if !w.placeable(in.snap.Dims) {
			continue // it asks for what no node has: it never starts
		}
		runtime := m.workRuntime(w.queue, w.kind, []*v1.Pod{w.template}, now)
		then.Pending = append(then.Pending, w.forecastWork(in, runtime, m.boundOf([]*v1.Pod{w.template}))...)
	}
	status := &visibilityv1beta1.WhatIfStatus{ForecastTime: metav1.NewTime(now)}
	seen := in.queues
	if !allQueues {
		seen = m.queuesSeenFrom(namespace, in.queues, as, spec)
	}
	status.Queues = m.sharesIf(seen, as, extra)
	before := ExpectedStarts{byKey: forecast.Predict(in.snap, m.forecastSettings()), at: now}
	after := ExpectedStarts{byKey: forecast.Predict(&then, m.forecastSettings()), at: now}
	for _, w := range in.pending {
		if w.item.Namespace == namespace {
			key := forecastKey(w)
			status.Workloads = append(status.Workloads, visibilityv1beta1.WorkloadStartChange{
				Workload: w.item.Workload, Queue: w.item.Queue, Start: before.Of(key), StartIf: after.Of(key)})
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

// queuesOutOfReach refuses the changes of queues that neither take namespace's work nor are above
// one that does, unknown queues alike: a namespace's viewer learns nothing of the others, not even
// that they exist.
func (m *Model) queuesOutOfReach(namespace string, changes []visibilityv1beta1.QueueChange) field.ErrorList {
	reach := map[string]bool{}
	for _, q := range m.queuesSeenFrom(namespace, m.acct.Store.AllQueues(), func(q *schedulingv1beta1.Queue) *schedulingv1beta1.Queue { return q },
		visibilityv1beta1.WhatIfSpec{}) {
		reach[q.Name] = true
	}
	var errs field.ErrorList
	for i, ch := range changes {
		if !reach[ch.Name] {
			errs = append(errs, field.Forbidden(field.NewPath("spec", "queues").Index(i).Child("name"), fmt.Sprintf(
				"queue %q takes no work of namespace %q, nor is it above one that does: asking about other queues takes the right to list queuesummaries",
				ch.Name, namespace)))
		}
	}
	return errs
}

// queuesSeenFrom are the queues a WhatIf about namespace answers for: those that take the
// namespace's work now or with the change, their ancestors, and the queues the change names. The
// other queues' names and shares are for those who may read every queue (the live view's
// queuesummaries), not for every namespace's viewers.
func (m *Model) queuesSeenFrom(namespace string, queues []*schedulingv1beta1.Queue, as accounting.QueuesAs, spec visibilityv1beta1.WhatIfSpec) []*schedulingv1beta1.Queue {
	seen := map[string]bool{}
	for _, ch := range spec.Queues {
		seen[ch.Name] = true
	}
	byName := make(map[string]*schedulingv1beta1.Queue, len(queues))
	for _, q := range queues {
		byName[q.Name] = q
	}
	for _, q := range queues {
		if m.acct.Store.NamespaceRefusal(q, namespace) != "" && m.acct.Store.NamespaceRefusal(as(q), namespace) != "" {
			continue
		}
		for name, depth := q.Name, 0; name != "" && !seen[name] && depth <= rules.MaxDepth; depth++ {
			seen[name] = true
			parent, ok := byName[name]
			if !ok || name == schedulingv1beta1.RootQueue {
				break
			}
			name = accounting.ParentOf(parent)
		}
	}
	out := make([]*schedulingv1beta1.Queue, 0, len(seen))
	for _, q := range queues {
		if seen[q.Name] {
			out = append(out, q)
		}
	}
	return out
}

// sharesIf is each queue's fair share now and with the change, from one reading of the shares'
// inputs: the queues as as gives them, asking for extra beside their demand.
func (m *Model) sharesIf(queues []*schedulingv1beta1.Queue, as accounting.QueuesAs, extra map[string]v1.ResourceList) []visibilityv1beta1.QueueShareChange {
	now, then, usage := m.acct.SharesIf(as, extra)
	out := make([]visibilityv1beta1.QueueShareChange, 0, len(queues))
	for _, q := range queues {
		held := usage[q.Name].Allocated
		out = append(out, visibilityv1beta1.QueueShareChange{Name: q.Name, Deserved: now[q.Name], DeservedIf: then[q.Name],
			Share: shareString(policy.DominantShare(held, now[q.Name])), ShareIf: shareString(policy.DominantShare(held, then[q.Name]))})
	}
	slices.SortFunc(out, func(a, b visibilityv1beta1.QueueShareChange) int { return strings.Compare(a.Name, b.Name) })
	return out
}
