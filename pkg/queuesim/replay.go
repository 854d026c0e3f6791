package queuesim

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/localcluster"
)

// highestUserPriority is the highest value a PriorityClass of a user's takes; work of a higher
// priority (a system class's) is replayed at it.
const highestUserPriority = 1_000_000_000

// DefaultReplayScale is a replay's time scale unless asked otherwise: simulated seconds a real
// second.
const DefaultReplayScale = 10

// ReplayOptions shape a replay.
type ReplayOptions struct {
	// TimeScale is how many simulated seconds pass in a real second; DefaultReplayScale when zero.
	TimeScale float64
	// Duration is how long the replay plays from the snapshot's moment; when zero, until the latest
	// expected start and a quarter as long again, and 5 minutes more (10 minutes at least).
	Duration time.Duration
	// Progress and Dir are as a scenario's Options.
	Progress io.Writer
	Dir      string
}

// Replay plays a ForecastSnapshot on an embedded control plane with the real scheduler, its
// controller and the Job controller: its nodes; its running pods, bound where they run, each ending
// when the snapshot expects it to; its queues; and its pending work, submitted in the scheduler's
// order, each pod running the runtime the snapshot expects of it. The result's Forecasts compare
// the snapshot's expected starts with the starts the replay shows: the forecast's error on its own
// input, without the error of its runtimes. The replay's names are the work's, prefixed with its
// place in the order.
func Replay(ctx context.Context, snap *visibilityv1beta1.ForecastSnapshot, opts ReplayOptions) (*Result, error) {
	if err := checkSnapshot(snap); err != nil {
		return nil, err
	}
	r := newReplay(snap, opts)
	cluster, err := localcluster.Start(ctx, localcluster.Options{Dir: opts.Dir, SchedulerProfile: r.scenario.schedulerProfile(),
		QueueClock: newQueueClock(r.scenario.TimeScale)})
	if err != nil {
		return nil, fmt.Errorf("start the control plane: %w", err)
	}
	defer cluster.Stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sim, err := r.start(ctx, cluster)
	if err != nil {
		return nil, err
	}
	return sim.play(ctx, r.scenario, opts.Progress)
}

// replay is a snapshot made into a scenario: its queues, priority classes and reservations, and
// its pending work as jobs, each named by its place.
type replay struct {
	snap     *visibilityv1beta1.ForecastSnapshot
	scenario *Scenario
	jobs     []JobStream
	// defaultQueue is the snapshot's default queue, which every cluster has: it is updated, not
	// created.
	defaultQueue *Queue
}

func newReplay(snap *visibilityv1beta1.ForecastSnapshot, opts ReplayOptions) *replay {
	r := &replay{snap: snap, scenario: &Scenario{Name: "replay of the snapshot of " + snap.ForecastTime.UTC().Format(time.RFC3339),
		TimeScale: opts.TimeScale, Duration: Duration{Duration: opts.Duration}, Sample: Duration{Duration: 10 * time.Second}}}
	if r.scenario.TimeScale <= 0 {
		r.scenario.TimeScale = DefaultReplayScale
	}
	if r.scenario.Duration.Duration <= 0 {
		r.scenario.Duration.Duration = replayLength(snap)
	}
	if len(snap.Reservations) > 0 {
		r.scenario.Reservations = &Reservations{}
	}
	for _, q := range snap.Queues {
		switch q.Name {
		case schedulingv1beta1.RootQueue:
		case schedulingv1beta1.DefaultQueue:
			r.defaultQueue = ptr.To(replayQueue(q))
		default:
			r.scenario.Queues = append(r.scenario.Queues, replayQueue(q))
		}
	}
	priorities := map[int32]bool{}
	width := len(strconv.Itoa(len(snap.Pending)))
	for i, w := range snap.Pending {
		w.Priority = min(w.Priority, highestUserPriority)
		if w.Priority != 0 && !priorities[w.Priority] {
			priorities[w.Priority] = true
			r.scenario.PriorityClasses = append(r.scenario.PriorityClasses, PriorityClass{Name: priorityClassOf(w.Priority), Value: w.Priority})
		}
		r.jobs = append(r.jobs, replayJob(fmt.Sprintf("%0*d-%s", width, i, w.Workload.Name), w))
	}
	return r
}

// replayLength is how long a replay plays by default: until the latest expected start and a quarter
// as long again, and 5 minutes more; 10 minutes at least.
func replayLength(snap *visibilityv1beta1.ForecastSnapshot) time.Duration {
	var latest time.Duration
	for _, w := range snap.Pending {
		if w.Start.P50 != nil {
			latest = max(latest, w.Start.P50.Sub(snap.ForecastTime.Time))
		}
	}
	return max(latest+latest/4+5*time.Minute, 10*time.Minute)
}

// replayQueue is a snapshot's queue as a scenario's, Suspended: a replay holds every queue's work
// back until all of it is submitted (resume).
func replayQueue(q visibilityv1beta1.SnapshotQueue) Queue {
	return Queue{Name: q.Name, Weight: q.Weight, Parent: q.Parent, Reclaimable: ptr.To(q.Reclaimable),
		Capability: quantities(q.Capability), Guarantee: quantities(q.Guarantee), State: string(schedulingv1beta1.QueueStateSuspended)}
}

// resume opens the queues the snapshot has open, in one burst once all the work is submitted: work
// earlier in the order, submitted first, would otherwise start before the later work is there to
// count in the fair shares.
func (r *replay) resume(ctx context.Context, c clients) error {
	api := c.queues.SchedulingV1beta1().Queues()
	for _, q := range r.snap.Queues {
		if q.Suspended || q.Name == schedulingv1beta1.RootQueue {
			continue
		}
		if _, err := api.Patch(ctx, q.Name, types.MergePatchType, []byte(`{"spec":{"state":"Open"}}`), metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("open queue %s: %w", q.Name, err)
		}
	}
	return nil
}

func quantities(list v1.ResourceList) map[string]Quantity {
	out := map[string]Quantity{}
	for name, q := range list {
		out[string(name)] = Quantity{Quantity: q, set: true}
	}
	return out
}

// priorityClassOf names the PriorityClass a replay gives work of priority p.
func priorityClassOf(p int32) string {
	return "replay-" + strings.ReplaceAll(strconv.Itoa(int(p)), "-", "minus-")
}

// replayJob is a piece of pending work as a job of the replay, named name: a pod, a gang of its
// members, or a QueueUnit's Job of as many pods as its members (all like its first), each running
// the work's expected runtime, within its bound.
func replayJob(name string, w visibilityv1beta1.SnapshotWork) JobStream {
	j := JobStream{Name: dnsName(name), Queue: w.Queue, Kind: KindPods, Count: 1, Runtime: Duration{Duration: w.Runtime.P50.Duration}}
	if w.Bound != nil {
		j.Deadline.Duration = w.Bound.Duration
	}
	if w.Priority != 0 {
		j.PriorityClass = priorityClassOf(w.Priority)
	}
	for _, m := range w.Members {
		j.Pods += int(m.Count)
	}
	switch w.Workload.Kind {
	case visibilityv1beta1.WorkloadPodGroup:
		j.Kind, j.MinMember = KindGang, j.Pods
	case visibilityv1beta1.WorkloadQueueUnit:
		j.Kind = KindUnit
	}
	if len(w.Members) > 0 {
		j.requests, j.nodes = w.Members[0].Requests, nodesOf(w.Members[0])
	}
	return j
}

// noNode names no node of a replay: the only node of pods no node takes.
const noNode = "queuesim-no-node"

// nodesOf are the only nodes members may run on; nil for any.
func nodesOf(m visibilityv1beta1.SnapshotMembers) []string {
	if m.NoNode {
		return []string{noNode}
	}
	return m.Nodes
}

// dnsName is name cut to 50 characters, ending in a letter or digit: room for a pod's index.
func dnsName(name string) string {
	if len(name) > 50 {
		name = name[:50]
	}
	return strings.TrimRight(name, "-.")
}

// start creates the snapshot's nodes, queues (Suspended) and running pods, and submits its pending
// work; then it starts the clock, the kubelets, the Job controller and the recorder, and opens the
// queues: the running pods' runtimes count from the replay's start, and work that fits at once
// starts then, under the recorder's eyes.
func (r *replay) start(ctx context.Context, cluster *localcluster.Cluster) (*simulation, error) {
	s := r.scenario
	sim := &simulation{clients: clients{kube: cluster.Kube, queues: cluster.Queues, scale: s.TimeScale}, clock: &clock{scale: s.TimeScale},
		watched: map[string]bool{}, reservations: s.Reservations != nil, predicted: map[string]bool{}}
	for _, q := range s.Queues {
		sim.watched[q.Name] = true
	}
	if r.defaultQueue != nil {
		sim.watched[schedulingv1beta1.DefaultQueue] = true
	}
	if err := r.createNodes(ctx, sim); err != nil {
		return nil, err
	}
	if err := sim.createBasics(ctx, s); err != nil {
		return nil, err
	}
	if err := r.updateDefaultQueue(ctx, sim.clients); err != nil {
		return nil, err
	}
	if err := sim.waitQueues(ctx, s); err != nil {
		return nil, err
	}
	if err := r.createRunning(ctx, sim.clients); err != nil {
		return nil, err
	}
	for i := range r.jobs {
		if err := r.submit(ctx, sim.clients, i); err != nil {
			return nil, err
		}
	}
	sim.clock.start = time.Now()
	sim.recorder = newRecorder(sim.clock)
	if err := runNodes(ctx, cluster, sim.clock, sim.recorder); err != nil {
		return nil, err
	}
	if err := r.resume(ctx, sim.clients); err != nil {
		return nil, err
	}
	sim.forecastChecks, sim.predictions = 1, r.predictions()
	return sim, nil
}

// createNodes creates the snapshot's nodes, Ready, with room for 110 pods unless it says.
func (r *replay) createNodes(ctx context.Context, sim *simulation) error {
	for _, n := range r.snap.Nodes {
		sim.capacity += n.Allocatable.Cpu().AsApproximateFloat64()
		node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name}, Spec: v1.NodeSpec{Unschedulable: n.Unschedulable}}
		if err := sim.createNode(ctx, node, n.Allocatable); err != nil {
			return err
		}
	}
	return nil
}

// createRunning creates the snapshot's running pods, bound to their nodes, each to run until its
// expected end (forever when it has none); a pod of no queue is another scheduler's.
func (r *replay) createRunning(ctx context.Context, c clients) error {
	for i, n := range r.snap.Nodes {
		for j, p := range n.Running {
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: fmt.Sprintf("running-%d-%d", i, j), Annotations: map[string]string{}},
				Spec: v1.PodSpec{NodeName: n.Name, SchedulerName: v1.DefaultSchedulerName, TerminationGracePeriodSeconds: ptr.To[int64](0),
					Containers: []v1.Container{{Name: "work", Image: "registry.k8s.io/pause:3.10",
						Resources: v1.ResourceRequirements{Requests: p.Requests, Limits: p.Requests.DeepCopy()}}}}}
			if p.Queue != "" {
				pod.Labels = map[string]string{QueueLabelKey: p.Queue, schedulingv1beta1.QueueLabel: p.Queue}
				pod.Spec.SchedulerName = schedulingv1beta1.SchedulerName
			}
			if p.EndP50 != nil {
				pod.Annotations[RuntimeAnnotation] = max(p.EndP50.Sub(r.snap.ForecastTime.Time), 0).String()
			}
			if err := c.createPod(ctx, pod); err != nil {
				return err
			}
		}
	}
	return nil
}

// submit creates pending work number i: its pod, its gang of its members, or its QueueUnit.
func (r *replay) submit(ctx context.Context, c clients, i int) error {
	j := &r.jobs[i]
	switch j.Kind {
	case KindGang:
		var pods []*v1.Pod
		for _, m := range r.snap.Pending[i].Members {
			member := *j
			member.requests, member.nodes = m.Requests, nodesOf(m)
			for range m.Count {
				pods = append(pods, member.pod(fmt.Sprintf("%s-%d", j.Name, len(pods)), j.Name, false, c.scale))
			}
		}
		return c.createGang(ctx, j.Name, j.Queue, int32(j.MinMember), 0, pods)
	case KindUnit:
		return c.submitUnit(ctx, j, j.Name)
	}
	for p := range j.Pods {
		name := j.Name
		if p > 0 {
			name = fmt.Sprintf("%s-%d", j.Name, p)
		}
		if err := c.createPod(ctx, j.pod(name, j.Name, true, c.scale)); err != nil {
			return err
		}
	}
	return nil
}

// predictions are the snapshot's expected starts, from the replay's start, by the replay's names.
func (r *replay) predictions() []prediction {
	var out []prediction
	for i, w := range r.snap.Pending {
		p := prediction{kind: w.Workload.Kind, name: r.jobs[i].Name, none: w.Start.P50 == nil}
		if w.Start.P50 != nil {
			p.p50 = max(w.Start.P50.Sub(r.snap.ForecastTime.Time), 0)
		}
		out = append(out, p)
	}
	return out
}

// updateDefaultQueue gives the cluster's default queue the snapshot's spec.
func (r *replay) updateDefaultQueue(ctx context.Context, c clients) error {
	if r.defaultQueue == nil {
		return nil
	}
	api := c.queues.SchedulingV1beta1().Queues()
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		q, err := api.Get(ctx, schedulingv1beta1.DefaultQueue, metav1.GetOptions{})
		if err != nil {
			return err
		}
		q.Spec = r.defaultQueue.object().Spec
		_, err = api.Update(ctx, q, metav1.UpdateOptions{})
		return err
	})
}
