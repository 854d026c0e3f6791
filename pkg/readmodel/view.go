package readmodel

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/client-go/tools/cache"
	resourcehelper "k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
	"k8s.io/utils/ptr"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/history"
	"github.com/queue-scheduler/queue-scheduler/pkg/holdreport"
	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
	"github.com/queue-scheduler/queue-scheduler/pkg/rules"
	"github.com/queue-scheduler/queue-scheduler/pkg/timeline"
)

// The live view (package visibility serves it) is read here, from the same caches and accounting
// the status is written from, on every replica, leading or not: it writes nothing.

// OnQueueChange registers f to be told the name of a queue whose summary may have changed: its
// object, its pods' usage, its deserved share, or the PodGroups and QueueUnits it counts. It may be
// called once the informers run; f must not block.
func (m *Model) OnQueueChange(f func(queue string)) error {
	m.acct.Events.QueueUsage.Subscribe(f)
	m.acct.Events.Deserved.Subscribe(f)
	m.acct.Events.WorkReleased.Subscribe(f)
	v1beta1 := m.acct.Informers.Scheduling().V1beta1()
	registrations := []struct {
		informer cache.SharedIndexInformer
		queueOf  func(any) (string, bool)
		deletes  bool // told here; the accounting tells of deleted work (Events.WorkReleased)
	}{
		{v1beta1.Queues().Informer(), queueOf(func(q *schedulingv1beta1.Queue) string { return q.Name }), true},
		{v1beta1.PodGroups().Informer(), queueOf(m.acct.Store.QueueOfPodGroup), false},
		{v1beta1.QueueUnits().Informer(), queueOf(m.acct.Store.QueueOfQueueUnit), false},
	}
	for _, r := range registrations {
		of := r.queueOf
		tell := func(obj any) {
			if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tombstone.Obj
			}
			if queue, ok := of(obj); ok {
				f(queue)
			}
		}
		handlers := cache.ResourceEventHandlerFuncs{AddFunc: tell, UpdateFunc: func(_, obj any) { tell(obj) }}
		if r.deletes {
			handlers.DeleteFunc = tell
		}
		if _, err := r.informer.AddEventHandler(handlers); err != nil {
			return err
		}
	}
	return nil
}

// queueOf reads the queue of an informer's object of type T.
func queueOf[T any](of func(*T) string) func(any) (string, bool) {
	return func(obj any) (string, bool) {
		if t, ok := obj.(*T); ok {
			return of(t), true
		}
		return "", false
	}
}

// QueueSummaries is every queue as the scheduler holds it now, by name.
func (m *Model) QueueSummaries() []visibilityv1beta1.QueueSummary {
	queues := m.acct.Store.AllQueues()
	out := make([]visibilityv1beta1.QueueSummary, 0, len(queues))
	for _, q := range queues {
		out = append(out, m.summary(q))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// QueueSummary is the named queue as the scheduler holds it now.
func (m *Model) QueueSummary(name string) (*visibilityv1beta1.QueueSummary, bool) {
	q, ok := m.acct.Store.Queue(name)
	if !ok {
		return nil, false
	}
	s := m.summary(q)
	return &s, true
}

// summary is one queue now: what its pods hold and ask for, its deserved share and the share it
// holds of it (computed from those two, as the accounting's DominantShare, without a snapshot), and
// the counts of its work.
func (m *Model) summary(q *schedulingv1beta1.Queue) visibilityv1beta1.QueueSummary {
	usage := m.acct.Pods.Usage(q.Name)
	deserved := m.acct.Deserved(q.Name)
	w := m.WorkCounts(q.Name)
	parent := ""
	if q.Name != schedulingv1beta1.RootQueue {
		parent = accounting.ParentOf(q)
	}
	s := visibilityv1beta1.QueueSummary{
		ObjectMeta: metav1.ObjectMeta{Name: q.Name, UID: q.UID, CreationTimestamp: q.CreationTimestamp,
			Labels: q.Labels},
		Parent:      parent,
		State:       q.Status.State,
		Weight:      q.Spec.Weight,
		Reclaimable: ptr.Deref(q.Spec.Reclaimable, true),
		Guarantee:   q.Spec.Guarantee.Resource,
		Capability:  q.Spec.Capability,
		Deserved:    deserved,
		Allocated:   usage.Allocated,
		Requested:   usage.Pending,
		Share:       shareString(policy.DominantShare(usage.Allocated, deserved)),
		RunningPods: int32(usage.Bound),
		PendingPods: int32(usage.Pods - usage.Bound),
		PodGroups: visibilityv1beta1.PodGroupCounts{Pending: w.Pending, Inqueue: w.Inqueue, Running: w.Running,
			Completed: w.Completed, Unknown: w.Unknown},
		Enqueued: w.Enqueued,
		Dequeued: w.Dequeued,
	}
	m.summarizeUsage(q.Name, &s)
	return s
}

// summarizeUsage sets the summary's usage, at the second (so that summaries taken within one are
// alike), and its effective weights.
func (m *Model) summarizeUsage(queue string, s *visibilityv1beta1.QueueSummary) {
	used, ok := m.acct.History.Remembered(queue)
	if !ok {
		return
	}
	s.Usage = history.Quantities(used.ResourceSeconds)
	at := metav1.NewTime(used.At.Truncate(time.Second))
	s.UsageTime = &at
	s.EffectiveWeight = history.Quantities(m.acct.EffectiveWeights(queue))
}

// shareString writes a dominant share with three decimals, or +Inf.
func shareString(share float64) string {
	if math.IsInf(share, 1) {
		return "+Inf"
	}
	return fmt.Sprintf("%.3f", share)
}

// PendingInQueue is the queue's pending work in the order the scheduler takes it; ok is false when
// the queue does not exist.
func (m *Model) PendingInQueue(queue string) (pending []visibilityv1beta1.PendingWorkload, ok bool) {
	if _, ok := m.acct.Store.Queue(queue); !ok {
		return nil, false
	}
	return m.pendingIn(queue, m.acct.Pods.WaitingPods()[queue]), true
}

// PendingInNamespace is the pending work of one namespace (of all when namespace is ""), queue by
// queue, each in its queue's order with its position among all of that queue's work; then the pods
// that wait for their PodGroup, in no queue yet (waitingForPodGroup), and the Jobs whose pods
// admission refuses (refusedJobs).
func (m *Model) PendingInNamespace(namespace string) []visibilityv1beta1.PendingWorkload {
	waiting := m.acct.Pods.WaitingPods()
	queues := map[string]bool{}
	if namespace == "" {
		for _, q := range m.acct.Store.AllQueues() {
			queues[q.Name] = true
		}
	}
	for queue, pods := range waiting {
		for _, p := range pods {
			if namespace == "" || p.Pod.Namespace == namespace {
				queues[queue] = true
				break
			}
		}
	}
	if namespace != "" {
		pgs, _ := m.acct.Store.PodGroups().PodGroups(namespace).List(labels.Everything())
		for _, pg := range pgs {
			queues[m.acct.Store.QueueOfPodGroup(pg)] = true
		}
		units, _ := m.acct.Store.QueueUnits().QueueUnits(namespace).List(labels.Everything())
		for _, u := range units {
			queues[m.acct.Store.QueueOfQueueUnit(u)] = true
		}
	}
	var out []visibilityv1beta1.PendingWorkload
	for _, queue := range sortedKeys(queues) {
		for _, w := range m.pendingIn(queue, waiting[queue]) {
			if namespace == "" || w.Namespace == namespace {
				out = append(out, w)
			}
		}
	}
	return append(append(out, m.waitingForPodGroup(namespace)...), m.refusedJobs(namespace)...)
}

// waitingForPodGroup is the pending work of namespace ("" for all) that no queue holds: the pods of
// queue-scheduler, not placed, whose PodGroup does not exist. Their PodGroup decides their queue, so
// no queue counts them until it comes; each stands alone, at no position (0), in the queue its label
// names if it names one, with the reason and message the scheduler holds it for.
func (m *Model) waitingForPodGroup(namespace string) []visibilityv1beta1.PendingWorkload {
	var out []visibilityv1beta1.PendingWorkload
	for _, pod := range m.acct.Pods.LivePods() {
		if pod.Spec.SchedulerName != schedulingv1beta1.SchedulerName || pod.Spec.NodeName != "" || pod.DeletionTimestamp != nil ||
			podutil.IsPodTerminal(pod) || (namespace != "" && pod.Namespace != namespace) || m.acct.Gangs.Key(pod) == "" {
			continue
		}
		if _, err := m.acct.QueueOf(pod); err != nil {
			out = append(out, workload(visibilityv1beta1.WorkloadPod, pod.Namespace, pod.Name, pod.CreationTimestamp,
				pod.Labels[schedulingv1beta1.QueueLabel], corev1helpers.PodPriority(pod), 1,
				resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}), holdreport.PodGroupMissing, err.Error()))
		}
	}
	slices.SortFunc(out, func(a, b visibilityv1beta1.PendingWorkload) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out
}

func sortedKeys(set map[string]bool) []string {
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// pendingIn numbers a queue's pending work (pendingWorkIn) and adds when each piece is expected to
// start.
func (m *Model) pendingIn(queue string, waiting []accounting.WaitingPod) []visibilityv1beta1.PendingWorkload {
	work := m.pendingWorkIn(queue, waiting, true)
	starts := m.ExpectedStarts()
	out := make([]visibilityv1beta1.PendingWorkload, len(work))
	for i, w := range work {
		out[i] = w.item
		out[i].ExpectedStart = starts.Of(forecastKey(w))
	}
	return out
}

// pendingWorkIn is a queue's pending work, numbered: first what the queue admitted (pods and gangs
// the scheduler may take now) in the scheduler's queue order, then the PodGroups and QueueUnits the
// queue has not admitted yet, in the order they are admitted.
//
// A queue that holds all of its work back (Suspended, Unknown) is why each piece waits, whatever its
// last attempt said; with refusalsNow, so is a queue that refuses a piece now (queueRefusalsNow).
func (m *Model) pendingWorkIn(queue string, waiting []accounting.WaitingPod, refusalsNow bool) []*pendingWork {
	// The informer lists pods in no fixed order: by name, a gang's first member is always the same.
	waiting = slices.Clone(waiting)
	slices.SortFunc(waiting, func(a, b accounting.WaitingPod) int {
		return cmp.Or(cmp.Compare(a.Pod.Namespace, b.Pod.Namespace), cmp.Compare(a.Pod.Name, b.Pod.Name))
	})
	admitted := m.admittedWork(queue, waiting)
	later := m.unadmittedWork(queue, waiting)
	q, _ := m.acct.Store.Queue(queue)
	hold := m.acct.Store.QueueHold(queue, q)
	if hold.Message == "" && refusalsNow {
		m.queueRefusalsNow(queue, admitted)
	}
	out := make([]*pendingWork, 0, len(admitted)+len(later))
	for _, part := range [][]*pendingWork{admitted, later} {
		sort.SliceStable(part, func(i, j int) bool { return policy.Ahead(part[i].place, part[j].place) })
		for _, w := range part {
			w.item.PositionInQueue = int32(len(out) + 1)
			if hold.Message != "" {
				w.item.Reason, w.item.Message = hold.Reason, hold.Message
			}
			out = append(out, w)
		}
	}
	return out
}

// queueRefusalsNow gives each admitted piece of work that its queue refuses now the queue's reason
// as it stands: the numbers of the snapshot the scheduler's next attempt reads, which the queue's
// summary reads too, rather than those of the piece's last attempt (a pod held at the gate is not
// tried again until its hold may end, so its condition keeps the numbers it was held on). A piece
// the queue takes now keeps what its last attempt said: the nodes, or its gang. A refusal that only
// waits for fresh shares, or for older work of the queue, is a moment's and says nothing new.
func (m *Model) queueRefusalsNow(queue string, admitted []*pendingWork) {
	snap := m.acct.Snapshot()
	for _, w := range admitted {
		if len(w.pods) == 0 {
			continue
		}
		switch w.item.Reason {
		case "", v1.PodReasonUnschedulable, holdreport.QueueCapability, holdreport.ExceedsCapability:
		default:
			continue // held for something else first: its gang, its unit
		}
		if refusal := m.gangNeverFits(snap, w); refusal != nil {
			w.item.Reason, w.item.Message = holdreport.ExceedsCapability, refusal.Message
			continue
		}
		pod := w.pods[0]
		req := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
		if reason, message, ok := queueReasonNow(queue, w.item.Reason, m.acct.AdmitPod(snap, pod, queue, req)); ok {
			w.item.Reason, w.item.Message = reason, message
		}
	}
}

// gangNeverFits is, for a gang's work, the capability its members ask together for more than (as
// Gang holds it), else nil: each member on its own may fit.
func (m *Model) gangNeverFits(snap *policy.Snapshot, w *pendingWork) *policy.Refusal {
	if w.item.Workload.Kind != visibilityv1beta1.WorkloadPodGroup {
		return nil
	}
	pg, ok := m.acct.Gangs.PodGroup(w.item.Namespace + "/" + w.item.Workload.Name)
	if !ok {
		return nil
	}
	return m.acct.GangNeverFits(snap, pg)
}

// queueReasonNow is why a piece of work that last waited for was waits now, given its queue's
// refusal now (nil: the queue takes it), with the reason the scheduler gives that refusal; ok is
// false when what its last attempt said stands: the queue takes it and it waited for something else
// (the nodes), or the refusal is a moment's (older work of the queue, a change of the queue on its
// way).
func queueReasonNow(queue, was string, refusal *policy.Refusal) (reason, message string, ok bool) {
	switch {
	case refusal == nil:
		if was != holdreport.QueueCapability && was != holdreport.ExceedsCapability {
			return "", "", false
		}
		return v1.PodReasonUnschedulable, fmt.Sprintf("queue %q takes it now: it waits for its next scheduling attempt", queue), true
	case refusal.Behind || refusal.Suspended || refusal.Unseen:
		return "", "", false
	case refusal.ExceedsCapability:
		return holdreport.ExceedsCapability, refusal.Message, true
	case refusal.AtCapability:
		return holdreport.QueueCapability, refusal.Message, true
	default:
		return v1.PodReasonUnschedulable, refusal.Message, true
	}
}

// pendingWork is a pending workload, its place in its queue, and its pods that wait; unit is the
// QueueUnit it is, if it is one.
type pendingWork struct {
	item  visibilityv1beta1.PendingWorkload
	place policy.Place
	pods  []*v1.Pod
	unit  *schedulingv1beta1.QueueUnit
}

// admittedWork gathers the queue's waiting pods: a pod of no gang alone, the waiting members of an
// admitted gang together. Members of a gang its queue has not admitted, and pods of a QueueUnit
// still Enqueued, are left to unadmittedWork.
func (m *Model) admittedWork(queue string, waiting []accounting.WaitingPod) []*pendingWork {
	var out []*pendingWork
	gangs := map[string]*pendingWork{}
	for _, p := range waiting {
		if u := m.acct.Store.UnitOf(p.Pod); u != nil && !u.Dequeued() {
			continue
		}
		key := m.acct.Gangs.Key(p.Pod)
		if key == "" {
			out = append(out, podWork(queue, p))
			continue
		}
		pg, ok := m.acct.Gangs.PodGroup(key)
		if ok && m.acct.WaitsForAdmission(pg) {
			continue
		}
		w := gangs[key]
		if w == nil {
			w = gangWork(queue, key, pg, p.Pod)
			w.item.Reservation = reservationView(m.acct.StartPlans.Reservation(key))
			gangs[key] = w
			out = append(out, w)
		}
		if pg == nil && p.Pod.CreationTimestamp.Before(&w.item.CreationTimestamp) {
			// A gang without its PodGroup stands where its oldest waiting member does.
			w.item.CreationTimestamp = p.Pod.CreationTimestamp
			w.place.Since = p.Pod.CreationTimestamp.Time
		}
		w.item.Pods++
		w.pods = append(w.pods, p.Pod)
		w.item.Requests = quota.Add(w.item.Requests, p.Requests)
		w.item.Priority = max(w.item.Priority, corev1helpers.PodPriority(p.Pod))
		w.place.Priority = w.item.Priority
	}
	return out
}

func podWork(queue string, p accounting.WaitingPod) *pendingWork {
	pod := p.Pod
	reason, message := podScheduledReason(pod)
	priority := corev1helpers.PodPriority(pod)
	return &pendingWork{
		item: workload(visibilityv1beta1.WorkloadPod, pod.Namespace, pod.Name, pod.CreationTimestamp, queue, priority, 1,
			p.Requests.DeepCopy(), reason, message),
		place: policy.Place{Priority: priority, Since: pod.CreationTimestamp.Time, Namespace: pod.Namespace, Name: pod.Name},
		pods:  []*v1.Pod{pod},
	}
}

// gangWork starts the item of an admitted gang from its first waiting member: its reason is the
// group's Unschedulable condition while it holds, else the member's.
func gangWork(queue, key string, pg *schedulingv1beta1.PodGroup, member *v1.Pod) *pendingWork {
	namespace, name, _ := strings.Cut(key, "/")
	created := member.CreationTimestamp
	reason, message := podScheduledReason(member)
	if pg != nil {
		created = pg.CreationTimestamp
		if cond := unschedulable(pg); cond != nil {
			reason, message = cond.Reason, cond.Message
		}
	}
	return &pendingWork{
		item:  workload(visibilityv1beta1.WorkloadPodGroup, namespace, name, created, queue, 0, 0, nil, reason, message),
		place: policy.Place{Since: created.Time, Namespace: namespace, Name: name},
	}
}

// unadmittedWork is the queue's PodGroups and QueueUnits that wait for their queue to admit them.
func (m *Model) unadmittedWork(queue string, waiting []accounting.WaitingPod) []*pendingWork {
	members, unitPods := map[string][]*v1.Pod{}, map[string][]*v1.Pod{}
	for _, p := range waiting {
		if u := m.acct.Store.UnitOf(p.Pod); u != nil && !u.Dequeued() {
			unitPods[accounting.UnitKey(u)] = append(unitPods[accounting.UnitKey(u)], p.Pod)
		} else if key := m.acct.Gangs.Key(p.Pod); key != "" {
			members[key] = append(members[key], p.Pod)
		}
	}
	var out []*pendingWork
	for _, pg := range m.acct.Store.PodGroupsOf(queue) {
		if !m.acct.WaitsForAdmission(pg) {
			continue
		}
		priority := m.acct.Store.PodGroupPriority(pg)
		reason, message := schedulingv1beta1.PodGroupNotAdmitted, "podgroup is Pending: its queue has not admitted it yet"
		if cond := unschedulable(pg); cond != nil {
			reason, message = cond.Reason, cond.Message
		}
		pods := members[pg.Namespace+"/"+pg.Name]
		out = append(out, &pendingWork{
			item: workload(visibilityv1beta1.WorkloadPodGroup, pg.Namespace, pg.Name, pg.CreationTimestamp, queue, priority,
				int32(len(pods)), pg.Spec.MinResources.DeepCopy(), reason, message),
			place: policy.PlaceOf(pg, priority),
			pods:  pods,
		})
	}
	for _, u := range m.acct.Store.QueueUnitsOf(queue) {
		if u.Dequeued() {
			continue
		}
		priority := m.acct.Store.UnitPriority(u)
		pods := unitPods[accounting.UnitKey(u)]
		reason := string(schedulingv1beta1.QueueUnitEnqueued)
		if len(rules.FitsCapability(field.NewPath("spec", "resource"), u.Spec.Resource, queue, m.acct.Rules())) > 0 {
			// Its capability was lowered below it after it was created: no run's end lets it in.
			reason = holdreport.ExceedsCapability
		}
		out = append(out, &pendingWork{
			item: workload(visibilityv1beta1.WorkloadQueueUnit, u.Namespace, u.Name, u.CreationTimestamp, queue, priority,
				int32(len(pods)), u.Spec.Resource.DeepCopy(), reason, u.Status.Message),
			place: policy.PlaceOf(u, priority),
			pods:  pods,
			unit:  u,
		})
	}
	return out
}

func workload(kind visibilityv1beta1.WorkloadKind, namespace, name string, created metav1.Time, queue string, priority, pods int32,
	requests v1.ResourceList, reason, message string) visibilityv1beta1.PendingWorkload {
	return visibilityv1beta1.PendingWorkload{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: strings.ToLower(string(kind)) + "." + name, CreationTimestamp: created},
		Workload:   visibilityv1beta1.WorkloadReference{Kind: kind, Name: name},
		Queue:      queue, Priority: priority, Pods: pods, Requests: requests, Reason: reason, Message: message,
	}
}

// podScheduledReason is why a pod waits, as its PodScheduled condition says.
func podScheduledReason(pod *v1.Pod) (reason, message string) {
	if _, c := podutil.GetPodCondition(&pod.Status, v1.PodScheduled); c != nil && c.Status == v1.ConditionFalse {
		return c.Reason, c.Message
	}
	return "", ""
}

// unschedulable is the PodGroup's Unschedulable condition while it holds, else nil.
func unschedulable(pg *schedulingv1beta1.PodGroup) *metav1.Condition {
	if c := meta.FindStatusCondition(pg.Status.Conditions, schedulingv1beta1.PodGroupUnschedulable); c != nil && c.Status == metav1.ConditionTrue {
		return c
	}
	return nil
}

// reservationView is a reservation as the live view shows it; nil for none.
func reservationView(r *timeline.Reservation) *visibilityv1beta1.Reservation {
	if r == nil {
		return nil
	}
	out := &visibilityv1beta1.Reservation{Start: metav1.NewTime(r.Start), Nodes: make([]string, 0, len(r.Nodes))}
	if !r.Open() {
		end := metav1.NewTime(r.End)
		out.End = &end
	}
	for _, share := range r.Nodes {
		out.Nodes = append(out.Nodes, share.Node)
	}
	return out
}
