package readmodel

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/utils/ptr"

	"github.com/queue-scheduler/queue-scheduler/apis/config"
	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/forecast"
	"github.com/queue-scheduler/queue-scheduler/pkg/podfit"
	"github.com/queue-scheduler/queue-scheduler/pkg/runtimes"
	"github.com/queue-scheduler/queue-scheduler/pkg/timeline"
)

// The forecast of when pending work starts (package forecast), as the live view serves it.
const (
	// forecastInterval is the least time between two forecasts, unless configured: the live view
	// serves the last one until it is that old.
	forecastInterval = config.DefaultForecastInterval
	// ForecastHorizon is how far ahead starts are looked for.
	ForecastHorizon = 7 * 24 * time.Hour
	// forecastResolution is the step ends are rounded up to, unless configured.
	forecastResolution = config.DefaultForecastResolution
	// runtimeHalfLife is how long after it ended a finished pod's runtime counts half.
	runtimeHalfLife = 7 * 24 * time.Hour
	// runtimeMinWeight is the least finished work (in runs, decayed) a learned runtime stands on.
	runtimeMinWeight = 3
)

// defaultRuntime is the runtime of work with no bound and nothing finished to learn from (its
// queue's work of its kind, its queue's work of any kind, or its kind in any queue), unless
// configured.
var defaultRuntime = runtimeOfMedian(config.DefaultForecastRuntime)

// runtimeOfMedian is a default runtime of median m: its 90th percentile is four times as long.
func runtimeOfMedian(m time.Duration) forecast.Runtime {
	return forecast.Runtime{P50: m, P90: 4 * m, Basis: forecast.Basis{Source: forecast.SourceDefault}}
}

// ForecastSettings configure the read model's forecasts; a zero field takes the default.
type ForecastSettings struct {
	// Resolution is the step running pods' ends are rounded up to.
	Resolution time.Duration
	// DefaultRuntime is the median runtime of work nothing is known of.
	DefaultRuntime time.Duration
	// Interval is the least time between two forecasts of the live view.
	Interval time.Duration
	// KnownRuntime, when set, tells a pod's runtime ahead of its run: the forecast plays it, within
	// the pod's bound, in place of the runtimes learned. A simulator, whose pods say how long they
	// run, sets it to measure the forecast's model apart from its estimates; nil on a cluster.
	KnownRuntime KnownRuntimes
}

// KnownRuntimes tells a pod's runtime ahead of its run, where it is known: known is false where it
// is not.
type KnownRuntimes func(*v1.Pod) (runtime time.Duration, known bool)

// forecaster keeps the last forecast, and the runtimes learned from finished pods under a lock of
// their own: the informer that tells of finished pods never waits for a forecast.
type forecaster struct {
	// settings configure the forecasts.
	settings ForecastSettings

	mu     sync.Mutex
	starts ExpectedStarts

	learnMu sync.Mutex
	learner *runtimes.Learner
	// restored is set once the learner took the runtimes checkpointed in the queues' status; since
	// holds, by queue, the time of the checkpoint it took: a run that ended by then is in it.
	restored bool
	since    map[string]time.Time

	// turns lets one WhatIf or ForecastSnapshot be answered at a time.
	turns forecastTurns
}

// ExpectedStarts are a forecast's starts by work key, and when it was made.
type ExpectedStarts struct {
	byKey map[string]forecast.Start
	at    time.Time
}

// At is when the forecast was made; zero for none.
func (e ExpectedStarts) At() time.Time { return e.at }

// Of is the expected start of the work of key ("<kind>/<namespace>/<name>", the kind as the live
// view names it), as the live view shows it; nil when the forecast does not hold the work (it came
// after it).
func (e ExpectedStarts) Of(key string) *visibilityv1beta1.ExpectedStart {
	s, ok := e.byKey[key]
	if !ok {
		return nil
	}
	out := &visibilityv1beta1.ExpectedStart{ForecastTime: metav1.NewTime(e.at)}
	if !s.P50.IsZero() {
		out.P50 = ptr.To(metav1.NewTime(s.P50))
	}
	if !s.P90.IsZero() {
		out.P90 = ptr.To(metav1.NewTime(s.P90))
	}
	out.RuntimeBasis = runtimeBasis(s.Basis)
	return out
}

// The API's names of the forecast's sources and scopes.
var (
	runtimeSources = map[forecast.Source]visibilityv1beta1.RuntimeSource{forecast.SourceDefault: visibilityv1beta1.RuntimeDefault,
		forecast.SourceOutlived: visibilityv1beta1.RuntimeOutlived, forecast.SourceLearned: visibilityv1beta1.RuntimeLearned,
		forecast.SourceBounded: visibilityv1beta1.RuntimeBounded, forecast.SourceKnown: visibilityv1beta1.RuntimeKnown}
	runtimeScopes = map[forecast.Scope]visibilityv1beta1.RuntimeScope{forecast.ScopeShape: visibilityv1beta1.ScopeShape,
		forecast.ScopeKind: visibilityv1beta1.ScopeKind, forecast.ScopeQueue: visibilityv1beta1.ScopeQueue,
		forecast.ScopeKindInAnyQueue: visibilityv1beta1.ScopeKindInAnyQueue, forecast.ScopeAll: visibilityv1beta1.ScopeAll}
)

// runtimeBasis is a start's basis as the live view shows it; nil for none.
func runtimeBasis(b forecast.Basis) *visibilityv1beta1.RuntimeBasis {
	source, ok := runtimeSources[b.Source]
	if !ok {
		return nil
	}
	return &visibilityv1beta1.RuntimeBasis{Source: source, Runs: int32(min(b.Runs, math.MaxInt32)), LearnedFrom: runtimeScopes[b.Scope]}
}

// forecastKey names a piece of pending work in a forecast.
func forecastKey(w *pendingWork) string {
	return string(w.item.Workload.Kind) + "/" + w.item.Namespace + "/" + w.item.Workload.Name
}

// ExpectedStarts is the last forecast, made again when it is the forecast interval old.
func (m *Model) ExpectedStarts() ExpectedStarts {
	f := &m.forecast
	f.mu.Lock()
	defer f.mu.Unlock()
	now := m.acct.Clock().Now()
	if f.starts.byKey != nil && now.Sub(f.starts.at) < cmp.Or(f.settings.Interval, forecastInterval) {
		return f.starts
	}
	f.starts = ExpectedStarts{byKey: forecast.Predict(m.forecastInput(now, nil).snap, m.forecastSettings()), at: now}
	return f.starts
}

// LastForecast is the last forecast made, whatever its age; zero when none was.
func (m *Model) LastForecast() ExpectedStarts {
	f := &m.forecast
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.starts
}

// forecastSettings bound every forecast the read model makes.
func (m *Model) forecastSettings() forecast.Settings {
	return forecast.Settings{Horizon: ForecastHorizon, Resolution: cmp.Or(m.forecast.settings.Resolution, forecastResolution),
		DefaultRuntime: m.defaultRuntime()}
}

// defaultRuntime is the runtime of work nothing is known of.
func (m *Model) defaultRuntime() forecast.Runtime {
	if median := m.forecast.settings.DefaultRuntime; median > 0 {
		return runtimeOfMedian(median)
	}
	return defaultRuntime
}

// LearnRuntime learns how long a finished pod ran, for its queue and kind of work.
func (m *Model) LearnRuntime(pod *v1.Pod) {
	if pod.Status.StartTime == nil {
		return
	}
	end := finishedAt(pod, m.acct.Clock().Now())
	queue, _ := m.acct.QueueOf(pod)
	f := &m.forecast
	f.learnMu.Lock()
	defer f.learnMu.Unlock()
	learner := m.learnerLocked()
	if !end.After(f.since[queue]) {
		return // counted in the checkpoint the learner resumed from
	}
	learner.Observe(m.runtimeKey(queue, m.kindOf(pod), pod), end.Sub(pod.Status.StartTime.Time), end)
}

// finishedAt is when a pod's last container ended, or now when its status does not say.
func finishedAt(pod *v1.Pod, now time.Time) time.Time {
	var last time.Time
	for _, s := range pod.Status.ContainerStatuses {
		if t := s.State.Terminated; t != nil && t.FinishedAt.After(last) {
			last = t.FinishedAt.Time
		}
	}
	if last.IsZero() {
		return now
	}
	return last
}

// kindOf is the kind of work a pod runs for, which its runtime is learned under: its gang's, its
// QueueUnit's, or its own controller's (PyTorchJob, Job...); Pod for a pod of none.
func (m *Model) kindOf(pod *v1.Pod) string {
	if key := m.acct.Gangs.Key(pod); key != "" {
		pg, _ := m.acct.Gangs.PodGroup(key)
		return podGroupKind(pg)
	}
	if u := m.acct.Store.UnitOf(pod); u != nil {
		return unitKind(u)
	}
	return controllerKind(pod.OwnerReferences, string(visibilityv1beta1.WorkloadPod))
}

// workKind is the kind of a piece of pending work, as kindOf names its pods'.
func (m *Model) workKind(w *pendingWork) string {
	namespace, name := w.item.Namespace, w.item.Workload.Name
	switch w.item.Workload.Kind {
	case visibilityv1beta1.WorkloadPodGroup:
		pg, _ := m.acct.Gangs.PodGroup(namespace + "/" + name)
		return podGroupKind(pg)
	case visibilityv1beta1.WorkloadQueueUnit:
		if u, err := m.acct.Store.QueueUnits().QueueUnits(namespace).Get(name); err == nil {
			return unitKind(u)
		}
		return string(visibilityv1beta1.WorkloadQueueUnit)
	}
	if len(w.pods) > 0 {
		return m.kindOf(w.pods[0])
	}
	return string(visibilityv1beta1.WorkloadPod)
}

// podGroupKind is the kind of the job a PodGroup runs (its controller's), or PodGroup.
func podGroupKind(pg *schedulingv1beta1.PodGroup) string {
	if pg == nil {
		return string(visibilityv1beta1.WorkloadPodGroup)
	}
	return controllerKind(pg.OwnerReferences, string(visibilityv1beta1.WorkloadPodGroup))
}

// unitKind is the kind of the job a QueueUnit queues, or QueueUnit.
func unitKind(u *schedulingv1beta1.QueueUnit) string {
	return cmp.Or(u.Spec.ConsumerRef.Kind, string(visibilityv1beta1.WorkloadQueueUnit))
}

// controllerKind is the kind of the controller among owners, or fallback.
func controllerKind(owners []metav1.OwnerReference, fallback string) string {
	for _, ref := range owners {
		if ref.Controller != nil && *ref.Controller {
			return ref.Kind
		}
	}
	return fallback
}

// runtimeOf is the learned runtime of work of key, or the default.
func (m *Model) runtimeOf(key runtimes.Key, now time.Time) runtimeEstimate {
	return m.runtimeAfter(key, now, 0)
}

// runtimeEstimate is a runtime, and the runtime of the same work when it has a runtime bound: the
// same when learned from work alike (of its queue, or of its kind), else the default. A bound says
// that the work runs on a scale of its own, which the runs of unrelated work do not tell.
type runtimeEstimate struct {
	forecast.Runtime
	bounded forecast.Runtime
}

// runtimeAfter is the runtime that work of key which has run for elapsed is expected to reach, as
// learned from the runs longer than that, or the default; a run past the default, as a run past
// every run learned (runtimes.Outlived).
func (m *Model) runtimeAfter(key runtimes.Key, now time.Time, elapsed time.Duration) runtimeEstimate {
	f := &m.forecast
	f.learnMu.Lock()
	defer f.learnMu.Unlock()
	def := m.defaultRuntime()
	if elapsed >= def.P50 {
		past := runtimes.Outlived(elapsed)
		def = forecast.Runtime{P50: past.Mean, P90: max(def.P90, past.P90), Basis: forecast.Basis{Source: forecast.SourceOutlived}}
	}
	e, ok := m.learnerLocked().EstimateAfter(key, now, elapsed)
	if !ok {
		return runtimeEstimate{Runtime: def, bounded: def}
	}
	learned := forecast.Runtime{P50: e.Mean, P90: e.P90, Basis: learnedBasis(e)}
	if e.From == (runtimes.Key{}) {
		return runtimeEstimate{Runtime: learned, bounded: def}
	}
	return runtimeEstimate{Runtime: learned, bounded: learned}
}

// learnedBasis is what a learned runtime stands on: the runs of the key it was read from, which
// the run may have outlived.
func learnedBasis(e runtimes.Estimate) forecast.Basis {
	b := forecast.Basis{Source: forecast.SourceLearned, Runs: int(math.Round(e.Runs)), Scope: scopeOf(e.From)}
	if e.Outlived {
		b.Source = forecast.SourceOutlived
	}
	return b
}

// scopeOf is which work the runtimes of key are learned from.
func scopeOf(key runtimes.Key) forecast.Scope {
	switch {
	case key.Shape != "":
		return forecast.ScopeShape
	case key.Queue != "" && key.Kind != "":
		return forecast.ScopeKind
	case key.Queue != "":
		return forecast.ScopeQueue
	case key.Kind != "":
		return forecast.ScopeKindInAnyQueue
	}
	return forecast.ScopeAll
}

// knownRuntime is pod's runtime as the settings tell it ahead of its run (KnownRuntime), at the
// median and the 90th percentile alike, bound or not; known is false when they do not.
func (m *Model) knownRuntime(pod *v1.Pod) (r runtimeEstimate, known bool) {
	tell := m.forecast.settings.KnownRuntime
	if tell == nil {
		return runtimeEstimate{}, false
	}
	d, known := tell(pod)
	r.Runtime = forecast.Runtime{P50: d, P90: d, Basis: forecast.Basis{Source: forecast.SourceKnown}}
	r.bounded = r.Runtime
	return r, known
}

// forecastIn is what a forecast starts from: its snapshot, the pending work the snapshot holds (in
// its queues' order, queue by queue), and the queues and nodes it was read from.
type forecastIn struct {
	snap     *forecast.Snapshot
	pending  []*pendingWork
	queues   []*schedulingv1beta1.Queue
	eligible *podfit.Eligibility
}

// forecastInput reads a forecast's snapshot from the caches: the nodes and the pods on them, each
// running until its runtime bound or its learned runtime ends; the queues; and the pending work as
// the live view lists it. Its vectors hold the resources the pending work asks for, and those of
// more that some node has.
func (m *Model) forecastInput(now time.Time, more []v1.ResourceName) *forecastIn {
	in := &forecastIn{queues: m.acct.Store.AllQueues()}
	waiting := m.acct.Pods.WaitingPods()
	for _, q := range in.queues {
		in.pending = append(in.pending, m.pendingWorkIn(q.Name, waiting[q.Name], false)...)
	}
	nodes, _ := m.acct.Nodes()
	dims := timeline.Dims(append(requestedNames(in.pending), onSomeNode(more, nodes)...))
	slices.SortFunc(nodes, func(a, b *v1.Node) int { return strings.Compare(a.Name, b.Name) })
	in.snap = &forecast.Snapshot{Now: now, Dims: dims, Nodes: forecast.NodesOf(dims, nodes, m.acct.Pods.LivePods(), m.queueOfPod,
		func(pod *v1.Pod) forecast.Ends { return m.endsOf(pod, now) }), Queues: forecastQueues(in.queues, nil)}
	in.eligible = podfit.NewEligibility(nodes)
	for _, w := range in.pending {
		members, pods := forecast.MembersOf(dims, w.pods, in.eligible), w.pods
		if len(w.pods) == 0 {
			// Work whose pods are not there yet (a QueueUnit's, say): what it asks for, as one, bound
			// as its pods will be.
			members = []forecast.Member{{Requests: podfit.Amounts(dims, w.item.Requests, 1)}}
			pods = []*v1.Pod{m.podToCome(w, now)}
		}
		in.snap.Pending = append(in.snap.Pending, forecast.Work{Key: forecastKey(w), Queue: w.item.Queue, Place: w.place, Members: members,
			Runtime: m.workRuntime(w.item.Queue, m.workKind(w), pods, now), Bound: m.boundOf(pods), Unit: w.item.Workload.Kind != visibilityv1beta1.WorkloadPod})
	}
	in.snap.Reservations = reservationsOf(m.acct.StartPlans.Latest(), nodes, dims)
	return in
}

// podToCome stands for the pods of work that has none yet (a QueueUnit's before its job is resumed,
// a PodGroup's before its pods are made): a QueueUnit's batch/v1 Job's pod, as its template makes it
// (requests defaulted from limits, as the API server defaults them), which the runtimes of its shape
// tell; and the runtime bound the pods will get: the template's, else the one the webhook will write
// (accounting.DeadlineFor: the Job's time left, else the queue's defaultActiveDeadlineSeconds).
func (m *Model) podToCome(w *pendingWork, now time.Time) *v1.Pod {
	pod := &v1.Pod{}
	job := m.unitJob(w.unit)
	if job != nil {
		job.Spec.Template.Spec.DeepCopyInto(&pod.Spec)
		pod.Annotations = job.Spec.Template.Annotations
		for i := range pod.Spec.InitContainers {
			defaultRequests(&pod.Spec.InitContainers[i], nil)
		}
		for i := range pod.Spec.Containers {
			defaultRequests(&pod.Spec.Containers[i], nil)
		}
		pod.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))}
	}
	if pod.Spec.ActiveDeadlineSeconds == nil {
		pod.Spec.ActiveDeadlineSeconds = accounting.DeadlineFor(job, m.acct.DefaultDeadline(w.item.Queue), now)
	}
	return pod
}

// unitJob is the batch/v1 Job a QueueUnit queues, as the consumers' cache holds it; nil for no unit,
// a consumer of another kind, or one not in the cache.
func (m *Model) unitJob(u *schedulingv1beta1.QueueUnit) *batchv1.Job {
	if u == nil || m.consumers == nil {
		return nil
	}
	ref := u.Spec.ConsumerRef
	if ref.Kind != "Job" || ref.APIVersion != batchv1.SchemeGroupVersion.String() {
		return nil
	}
	obj := m.consumers.Cached(u.Namespace, ref)
	if obj == nil {
		return nil
	}
	job := &batchv1.Job{}
	if runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, job) != nil {
		return nil
	}
	return job
}

// boundOf is how long pods run at the most together, by their runtime bounds (the longest); zero
// when one has none, or there are none.
func (m *Model) boundOf(pods []*v1.Pod) time.Duration {
	var longest time.Duration
	for _, pod := range pods {
		b := m.acct.RuntimeBound(pod)
		if !b.Bounded() {
			return 0
		}
		longest = max(longest, b.After+b.Grace)
	}
	return longest
}

// reservationsOf are the reservations of plan (nil for none) as a forecast on nodes of dims reads
// them.
func reservationsOf(plan *timeline.Plan, nodes []*v1.Node, dims []v1.ResourceName) []forecast.Reservation {
	if plan.Empty() {
		return nil
	}
	index := make(map[string]int, len(nodes))
	for i, n := range nodes {
		index[n.Name] = i
	}
	out := make([]forecast.Reservation, 0, len(plan.Reservations))
	for _, r := range plan.Reservations {
		fr := forecast.Reservation{Gang: string(visibilityv1beta1.WorkloadPodGroup) + "/" + r.Gang, Start: r.Start}
		for _, share := range r.Nodes {
			if i, ok := index[share.Node]; ok {
				fr.Nodes = append(fr.Nodes, forecast.Held{Node: i, Amount: inDims(share.Amount, plan.Dims, dims)})
			}
		}
		out = append(out, fr)
	}
	return out
}

// inDims is v, a vector of from, as a vector of to: resources to has and from has not are zero.
func inDims(v podfit.Vector, from, to []v1.ResourceName) podfit.Vector {
	out := make(podfit.Vector, len(to))
	for i, name := range to {
		if j := slices.Index(from, name); j >= 0 && j < len(v) {
			out[i] = v[j]
		}
	}
	return out
}

// forecastQueues are the queues as a forecast reads them, each as as gives it (as it is for nil).
func forecastQueues(queues []*schedulingv1beta1.Queue, as accounting.QueuesAs) []forecast.Queue {
	out := make([]forecast.Queue, 0, len(queues))
	for _, q := range queues {
		if as != nil {
			q = as(q)
		}
		parent := ""
		if q.Name != schedulingv1beta1.RootQueue {
			parent = accounting.ParentOf(q)
		}
		out = append(out, forecast.Queue{Name: q.Name, Parent: parent, Weight: q.Spec.Weight, Guarantee: q.Spec.Guarantee.Resource,
			Capability: q.Spec.Capability, Reclaimable: ptr.Deref(q.Spec.Reclaimable, true), Suspended: q.EffectiveState() == schedulingv1beta1.QueueStateSuspended})
	}
	return out
}

// boundedRuntime is the runtime of pods: r, or when they have a runtime bound (the least
// activeDeadlineSeconds among them) r's bounded runtime within it, read from the bound when it cuts
// the central value short.
func boundedRuntime(r runtimeEstimate, pods []*v1.Pod) forecast.Runtime {
	var bound time.Duration
	for _, pod := range pods {
		if ads := pod.Spec.ActiveDeadlineSeconds; ads != nil && (bound == 0 || time.Duration(*ads)*time.Second < bound) {
			bound = time.Duration(*ads) * time.Second
		}
	}
	if bound == 0 {
		return r.Runtime
	}
	out := forecast.Runtime{P50: min(r.bounded.P50, bound), P90: min(r.bounded.P90, bound), Basis: r.bounded.Basis}
	if bound < r.bounded.P50 {
		out.Basis = forecast.Basis{Source: forecast.SourceBounded}
	}
	return out
}

// queueOfPod is the queue of a pod the accounting counts, or "".
func (m *Model) queueOfPod(pod *v1.Pod) string {
	if pod.Spec.SchedulerName != schedulingv1beta1.SchedulerName {
		return ""
	}
	queue, _ := m.acct.QueueOf(pod)
	return queue
}

// endsOf is when a running pod is expected to end: a queue's pod after the runtime learned of the
// runs of its queue and kind longer than it has run already (or the default) counted from its
// start, and by its runtime bound at the latest (with a bound, after its bounded runtime:
// runtimeEstimate); another scheduler's pod (a DaemonSet's, a service's) by its bound alone, or
// never. A pod being deleted (evicted, preempted, its job ended) ends by its deletionTimestamp, when
// the kubelet stops it, at the latest. No end is earlier than now.
func (m *Model) endsOf(pod *v1.Pod, now time.Time) forecast.Ends {
	e := m.endsByRuntime(pod, now)
	if d := pod.DeletionTimestamp; d != nil {
		deadline := latestOf(d.Time, now)
		if e.P50.IsZero() || deadline.Before(e.P50) {
			e.P50, e.Basis = deadline, forecast.Basis{Source: forecast.SourceBounded}
		}
		if e.P90.IsZero() || deadline.Before(e.P90) {
			e.P90 = deadline
		}
	}
	return e
}

// endsByRuntime is endsOf but for a deletion.
func (m *Model) endsByRuntime(pod *v1.Pod, now time.Time) forecast.Ends {
	start := now
	if pod.Status.StartTime != nil {
		start = pod.Status.StartTime.Time
	}
	bound := m.acct.RunningEnd(pod, now)
	byBound := forecast.Basis{Source: forecast.SourceBounded}
	queue := m.queueOfPod(pod)
	if queue == "" {
		if bound.IsZero() {
			return forecast.Ends{}
		}
		return forecast.Ends{P50: latestOf(bound, now), P90: latestOf(bound, now), Basis: byBound}
	}
	r, known := m.knownRuntime(pod)
	if !known {
		r = m.runtimeAfter(m.runtimeKey(queue, m.kindOf(pod), pod), now, max(now.Sub(start), 0))
	}
	p50, p90, basis := start.Add(r.P50), start.Add(r.P90), r.Basis
	if !bound.IsZero() {
		p50, p90, basis = earliest(start.Add(r.bounded.P50), bound), earliest(start.Add(r.bounded.P90), bound), r.bounded.Basis
		if bound.Before(start.Add(r.bounded.P50)) {
			basis = byBound
		}
	}
	return forecast.Ends{P50: latestOf(p50, now), P90: latestOf(p90, now), Basis: basis}
}

func earliest(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func latestOf(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// onSomeNode are the names among names that some node has allocatable.
func onSomeNode(names []v1.ResourceName, nodes []*v1.Node) []v1.ResourceName {
	var out []v1.ResourceName
	for _, name := range names {
		for _, node := range nodes {
			if _, ok := node.Status.Allocatable[name]; ok {
				out = append(out, name)
				break
			}
		}
	}
	return out
}

// requestedNames are the resources the pending work asks for.
func requestedNames(pending []*pendingWork) []v1.ResourceName {
	var names []v1.ResourceName
	add := func(list v1.ResourceList) {
		for name := range list {
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	for _, w := range pending {
		add(w.item.Requests)
		for _, pod := range w.pods {
			add(resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}))
		}
	}
	slices.SortFunc(names, func(a, b v1.ResourceName) int { return strings.Compare(string(a), string(b)) })
	return names
}
