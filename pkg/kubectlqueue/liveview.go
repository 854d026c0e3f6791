package kubectlqueue

import (
	"context"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
)

// The live view (visibility.queue-scheduler.io) is read when the cluster serves it and the user may
// read it; otherwise the commands print what the queues' status says, which the scheduler writes at
// a pace (docs/visibility.md).

// withLiveStatus replaces the counts and resources of each queue's status by the live view's, when
// it is served: the status lags behind the scheduler by up to its write interval.
func (o *Options) withLiveStatus(ctx context.Context, queues []*schedulingv1beta1.Queue) {
	list, err := o.queues.VisibilityV1beta1().QueueSummaries().List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	live := make(map[string]*visibilityv1beta1.QueueSummary, len(list.Items))
	for i := range list.Items {
		live[list.Items[i].Name] = &list.Items[i]
	}
	for _, q := range queues {
		s, ok := live[q.Name]
		if !ok || s.UID != q.UID {
			continue
		}
		st := &q.Status
		st.Pending, st.Inqueue, st.Running = s.PodGroups.Pending, s.PodGroups.Inqueue, s.PodGroups.Running
		st.Completed, st.Unknown = s.PodGroups.Completed, s.PodGroups.Unknown
		st.RunningPods, st.PendingPods, st.Enqueued, st.Dequeued = s.RunningPods, s.PendingPods, s.Enqueued, s.Dequeued
		st.Allocated, st.Deserved = s.Allocated, s.Deserved
		if s.UsageTime != nil {
			st.Usage = &schedulingv1beta1.UsageCheckpoint{ResourceSeconds: s.Usage, EffectiveWeight: s.EffectiveWeight, Time: *s.UsageTime}
		}
	}
}

// liveWork is a piece of pending work as the live view has it: its place in its queue, and why it
// waits, computed at the request from the state the queue's summary is read from.
type liveWork struct {
	position int32
	waiting  string
}

// liveWorkOf is a queue's pending work from the live view, by "Kind/namespace/name": of every
// namespace for a user who may read the queue's pending work, else of scope, the namespace the
// user's listing is narrowed to. Nil when the view is not served or not readable.
func (o *Options) liveWorkOf(ctx context.Context, queue, scope string) map[string]liveWork {
	var items []visibilityv1beta1.PendingWorkload
	if scope == metav1.NamespaceAll {
		list, err := o.queues.VisibilityV1beta1().QueueSummaries().GetPendingWorkloads(ctx, queue, metav1.GetOptions{})
		if err != nil {
			return nil
		}
		items = list.Items
	} else {
		list, err := o.queues.VisibilityV1beta1().PendingWorkloads(scope).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil
		}
		items = list.Items
	}
	out := make(map[string]liveWork, len(items))
	for _, w := range items {
		if w.Queue == queue {
			out[liveKey(string(w.Workload.Kind), w.Namespace, w.Workload.Name)] = liveWork{position: w.PositionInQueue, waiting: w.Message}
		}
	}
	return out
}

func liveKey(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }

// fromLiveView takes a job's place in its queue and why it waits from the live view: its own
// piece of work, or for a Job its first waiting pod's. A PodGroup's reservation keeps saying when it
// starts, which says more than why it could not start yet.
func (j *job) fromLiveView(work map[string]liveWork) {
	kind, _, _ := strings.Cut(j.kind, " ")
	w, ok := work[liveKey(kind, j.namespace, j.name)]
	for _, pod := range j.pods {
		if p, found := work[liveKey(string(visibilityv1beta1.WorkloadPod), j.namespace, pod)]; found && (!ok || p.position < w.position) {
			w, ok = p, true
		}
	}
	if !ok {
		return
	}
	j.position = w.position
	if w.waiting != "" && !j.reserved {
		j.waiting = w.waiting
	}
}
