package readmodel

import (
	"context"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/forecast"
	"github.com/queue-scheduler/queue-scheduler/pkg/podfit"
	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
)

// ForecastSnapshot is the state a forecast reads now, and the forecast made from it: the input
// and the answer of forecast.Predict, in the API's terms. It is played fresh, not taken from the
// live view's last forecast, so that its starts are those of its state; like a WhatIf, it waits
// its turn.
func (m *Model) ForecastSnapshot(ctx context.Context) (*visibilityv1beta1.ForecastSnapshot, error) {
	release, err := m.forecast.turns.take(ctx, forecastTurnWait)
	if err != nil {
		return nil, err
	}
	defer release()
	now := m.acct.Clock().Now()
	in := m.forecastInput(now, nil)
	settings := m.forecastSettings()
	starts := forecast.Predict(in.snap, settings)
	s := in.snap
	out := &visibilityv1beta1.ForecastSnapshot{ObjectMeta: metav1.ObjectMeta{Name: visibilityv1beta1.CurrentSnapshot},
		ForecastTime: metav1.NewMicroTime(now), Resolution: metav1.Duration{Duration: settings.Resolution}, Resources: s.Dims}
	names := make([]string, len(s.Nodes))
	for i, n := range s.Nodes {
		names[i] = n.Name
		out.Nodes = append(out.Nodes, snapshotNode(s.Dims, n))
	}
	for _, q := range s.Queues {
		out.Queues = append(out.Queues, visibilityv1beta1.SnapshotQueue{Name: q.Name, Parent: q.Parent, Weight: q.Weight,
			Guarantee: q.Guarantee, Capability: q.Capability, Reclaimable: q.Reclaimable, Suspended: q.Suspended})
	}
	for i, w := range s.Pending {
		item := in.pending[i].item
		out.Pending = append(out.Pending, visibilityv1beta1.SnapshotWork{Workload: item.Workload, Namespace: item.Namespace,
			Queue: w.Queue, Priority: w.Place.Priority, Since: metav1.NewMicroTime(w.Place.Since), Members: snapshotMembers(s.Dims, w.Members, names),
			Runtime: snapshotRuntime(w.Runtime, settings.DefaultRuntime), Bound: durationOrNil(w.Bound), Start: visibilityv1beta1.SnapshotStart{P50: timeOrNil(starts[w.Key].P50), P90: timeOrNil(starts[w.Key].P90)}})
	}
	slices.SortStableFunc(out.Pending, placeOrder)
	for _, r := range s.Reservations {
		kind, namespace, name := splitWorkKey(r.Gang)
		sr := visibilityv1beta1.SnapshotReservation{Workload: visibilityv1beta1.WorkloadReference{Kind: kind, Name: name},
			Namespace: namespace, Start: metav1.NewMicroTime(r.Start)}
		for _, h := range r.Nodes {
			sr.Nodes = append(sr.Nodes, visibilityv1beta1.SnapshotHeld{Node: names[h.Node], Amount: podfit.List(s.Dims, h.Amount)})
		}
		out.Reservations = append(out.Reservations, sr)
	}
	return out, nil
}

// snapshotNode is a node of a forecast's snapshot: its room and what its running pods hold, its
// allocatable.
func snapshotNode(dims []v1.ResourceName, n forecast.Node) visibilityv1beta1.SnapshotNode {
	allocatable := n.Free.Clone()
	out := visibilityv1beta1.SnapshotNode{Name: n.Name, Unschedulable: n.Cordoned}
	for _, r := range n.Running {
		allocatable.Add(r.Requests, 1)
		out.Running = append(out.Running, visibilityv1beta1.SnapshotPod{Queue: r.Queue, Requests: requestList(dims, r.Requests),
			EndP50: timeOrNil(r.Ends.P50), EndP90: timeOrNil(r.Ends.P90)})
	}
	out.Allocatable = podfit.List(dims, allocatable)
	return out
}

// snapshotMembers are a work's members, alike ones in a row counted together.
func snapshotMembers(dims []v1.ResourceName, members []forecast.Member, nodes []string) []visibilityv1beta1.SnapshotMembers {
	var out []visibilityv1beta1.SnapshotMembers
	for i, m := range members {
		if i > 0 && slices.Equal(m.Requests, members[i-1].Requests) && slices.Equal(m.Eligible, members[i-1].Eligible) {
			out[len(out)-1].Count++
			continue
		}
		names := eligibleNames(m.Eligible, nodes)
		out = append(out, visibilityv1beta1.SnapshotMembers{Count: 1, Requests: requestList(dims, m.Requests), Nodes: names,
			NoNode: names != nil && len(names) == 0})
	}
	return out
}

// requestList is what a pod requests, as a ResourceList: the pod count a vector holds is no
// request.
func requestList(dims []v1.ResourceName, v podfit.Vector) v1.ResourceList {
	out := podfit.List(dims, v)
	delete(out, v1.ResourcePods)
	return out
}

// eligibleNames are the nodes eligible says a pod may run on; nil for every node.
func eligibleNames(eligible []bool, nodes []string) []string {
	if eligible == nil || !slices.Contains(eligible, false) {
		return nil
	}
	out := []string{}
	for i, ok := range eligible {
		if ok {
			out = append(out, nodes[i])
		}
	}
	return out
}

// snapshotRuntime is a work's runtime, def where it states none.
func snapshotRuntime(r, def forecast.Runtime) visibilityv1beta1.RuntimeEstimate {
	if r.P50 == 0 {
		r = def
	}
	return visibilityv1beta1.RuntimeEstimate{P50: metav1.Duration{Duration: r.P50}, P90: metav1.Duration{Duration: r.P90}}
}

// placeOrder orders work as the scheduler takes it.
func placeOrder(a, b visibilityv1beta1.SnapshotWork) int {
	return policy.Compare(policy.Place{Priority: a.Priority, Since: a.Since.Time, Namespace: a.Namespace, Name: a.Workload.Name},
		policy.Place{Priority: b.Priority, Since: b.Since.Time, Namespace: b.Namespace, Name: b.Workload.Name})
}

// splitWorkKey reads a forecast's work key: kind, namespace and name.
func splitWorkKey(key string) (visibilityv1beta1.WorkloadKind, string, string) {
	kind, rest, _ := strings.Cut(key, "/")
	namespace, name, _ := strings.Cut(rest, "/")
	return visibilityv1beta1.WorkloadKind(kind), namespace, name
}

func timeOrNil(t time.Time) *metav1.MicroTime {
	if t.IsZero() {
		return nil
	}
	return ptr.To(metav1.NewMicroTime(t))
}

func durationOrNil(d time.Duration) *metav1.Duration {
	if d == 0 {
		return nil
	}
	return &metav1.Duration{Duration: d}
}
