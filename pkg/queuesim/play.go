package queuesim

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/component-base/term"
	"k8s.io/kubernetes/pkg/controller/job"

	"github.com/queue-scheduler/queue-scheduler/pkg/generated/informers/externalversions"
	"github.com/queue-scheduler/queue-scheduler/pkg/localcluster"
)

// tick is how often the player looks at the clock, in real time.
const tick = 50 * time.Millisecond

// event is something that happens at a simulated time.
type event struct {
	at      time.Duration
	name    string
	action  bool // an operator's action, listed in the report
	arrival bool // a piece of work submitted (name is its job's)
	do      func(context.Context) error
}

// Options shape a run.
type Options struct {
	// Progress receives progress lines: on a terminal one line rewritten every second, elsewhere (a log)
	// a line of its own every ten seconds; nil for none.
	Progress io.Writer
	// Dir keeps the control plane's data; a temporary directory when empty.
	Dir string
}

// Run stands up the whole system, plays the scenario on it and returns what happened.
func Run(ctx context.Context, s *Scenario, opts Options) (*Result, error) {
	cluster, err := localcluster.Start(ctx, localcluster.Options{Dir: opts.Dir, SchedulerProfile: s.schedulerProfile(),
		QueueClock: newQueueClock(s.TimeScale), KnownRuntime: s.knownRuntime()})
	if err != nil {
		return nil, fmt.Errorf("start the control plane: %w", err)
	}
	defer cluster.Stop()
	// The simulated kubelets, the recorder and the Job controller stop before the control plane.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sim, err := start(ctx, cluster, s)
	if err != nil {
		return nil, err
	}
	return sim.play(ctx, s, opts.Progress)
}

// simulation is a scenario under way on a cluster.
type simulation struct {
	clients
	clock    *clock
	recorder *recorder
	capacity float64
	samples  []Sample
	// watched are the queues the report follows: the scenario's and those its jobs use.
	watched map[string]bool
	// reservations: the scenario has a reservations section (on or off); the report follows its
	// gangs.
	reservations bool
	// forecastChecks counts the reads of the expected starts; predictions are the starts read, each
	// once per forecast (predicted).
	forecastChecks int
	predictions    []prediction
	predicted      map[string]bool
	// snapshots are the forecast's snapshots taken, in simulated time.
	snapshots []TakenSnapshot
	// arrivals are the pieces of work submitted, in order, at the simulated time each was.
	arrivals []arrival
}

// arrival is a piece of work submitted: its job's name (JobLabelKey) and when, in simulated time.
type arrival struct {
	job string
	at  time.Duration
}

// start creates what the scenario starts with and the simulated kubelets and Job controller.
func start(ctx context.Context, cluster *localcluster.Cluster, s *Scenario) (*simulation, error) {
	sim := &simulation{clients: clients{kube: cluster.Kube, queues: cluster.Queues, scale: s.TimeScale}, clock: &clock{scale: s.TimeScale},
		watched: map[string]bool{}, reservations: s.Reservations != nil, predicted: map[string]bool{}}
	for _, q := range s.Queues {
		sim.watched[q.Name] = true
	}
	for _, j := range s.Jobs {
		sim.watched[j.Queue] = true
	}
	for _, g := range s.Nodes {
		sim.capacity += float64(g.Count) * g.CPU.AsApproximateFloat64()
	}
	if err := sim.createNodes(ctx, s.Nodes); err != nil {
		return nil, err
	}
	if err := sim.createBasics(ctx, s); err != nil {
		return nil, err
	}
	if err := sim.waitQueues(ctx, s); err != nil {
		return nil, err
	}
	sim.clock.start = time.Now()
	sim.recorder = newRecorder(sim.clock)
	if err := runNodes(ctx, cluster, sim.clock, sim.recorder); err != nil {
		return nil, err
	}
	return sim, nil
}

// runNodes starts the kubelet stand-in, the recorder, the upstream Job controller (which
// QueueUnits of batch/v1 Jobs need), and the garbage collector and namespace controller (see
// controllers) on informers of their own.
func runNodes(ctx context.Context, cluster *localcluster.Cluster, c *clock, r *recorder) error {
	kube := informers.NewSharedInformerFactory(cluster.Kube, 0)
	pods := kube.Core().V1().Pods()
	if err := newKubelet(cluster.Kube, c).watch(ctx, pods.Informer()); err != nil {
		return err
	}
	jobs, err := job.NewController(ctx, cluster.Kube, pods, kube.Batch().V1().Jobs(), nil, nil)
	if err != nil {
		return fmt.Errorf("start the Job controller: %w", err)
	}
	deletion, err := newControllers(ctx, cluster.Config, kube)
	if err != nil {
		return err
	}
	queues := externalversions.NewSharedInformerFactory(cluster.Queues, 0)
	if r != nil {
		if err := r.watchPods(pods.Informer()); err != nil {
			return err
		}
		if err := r.watchPodGroups(queues.Scheduling().V1beta1().PodGroups().Informer()); err != nil {
			return err
		}
	}
	kube.Start(ctx.Done())
	queues.Start(ctx.Done())
	kube.WaitForCacheSync(ctx.Done())
	queues.WaitForCacheSync(ctx.Done())
	go jobs.Run(ctx, 2)
	deletion.run(ctx)
	return nil
}

// waitQueues waits until the controller reports every queue, so that the first jobs meet them ready.
func (sim *simulation) waitQueues(ctx context.Context, s *Scenario) error {
	deadline := time.Now().Add(time.Minute)
	for _, q := range s.Queues {
		for {
			got, err := sim.queues.SchedulingV1beta1().Queues().Get(ctx, q.Name, metav1.GetOptions{})
			if err == nil && got.Status.State != "" {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("queue %s has no status after a minute: is the controller running?", q.Name)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(tick):
			}
		}
	}
	return nil
}

// timeline lists every arrival and action in the order they happen.
func (sim *simulation) timeline(s *Scenario) []event {
	rng := rand.New(rand.NewPCG(s.Seed, s.Seed^0x9e3779b97f4a7c15))
	var out []event
	for i := range s.Jobs {
		j := &s.Jobs[i]
		for n, at := range j.arrivals(rng) {
			out = append(out, event{at: at, name: fmt.Sprintf("%s-%d", nameOr(j.Name, "job"), n), arrival: true,
				do: func(ctx context.Context) error { return sim.submit(ctx, j, n) }})
		}
	}
	for i := range s.Actions {
		a := &s.Actions[i]
		out = append(out, event{at: a.At.Duration, name: a.describe(), action: true,
			do: func(ctx context.Context) error { return sim.act(ctx, a) }})
	}
	for _, at := range s.Snapshots {
		out = append(out, event{at: at.Duration, name: "snapshot", do: func(ctx context.Context) error {
			snap, err := sim.takeSnapshot(ctx)
			if err == nil {
				sim.snapshots = append(sim.snapshots, TakenSnapshot{At: at.Duration, Snapshot: snap})
			}
			return err
		}})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].at < out[j].at })
	return out
}

// play runs the timeline against the clock, samples the queues, and ends with the result.
func (sim *simulation) play(ctx context.Context, s *Scenario, progress io.Writer) (*Result, error) {
	events := sim.timeline(s)
	var actions []ActionRecord
	nextSample, nextCheck, lastProgress := time.Duration(0), time.Duration(0), time.Now()
	every, terminal := progressEvery(progress)
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	for {
		now := sim.clock.now()
		for len(events) > 0 && events[0].at <= now {
			e := events[0]
			events = events[1:]
			if e.arrival {
				sim.arrivals = append(sim.arrivals, arrival{job: e.name, at: sim.clock.now()})
			}
			if err := e.do(ctx); err != nil {
				return nil, fmt.Errorf("at %s, %s: %w", e.at, e.name, err)
			}
			if e.action {
				actions = append(actions, ActionRecord{At: e.at, What: e.name})
			}
		}
		if now >= nextSample {
			if err := sim.sample(ctx, now); err != nil {
				return nil, err
			}
			nextSample += s.Sample.Duration
		}
		if s.ForecastCheck.Duration > 0 && now >= nextCheck {
			sim.checkForecasts(ctx)
			nextCheck += s.ForecastCheck.Duration
		}
		if progress != nil && time.Since(lastProgress) >= every {
			lastProgress = time.Now()
			sim.printProgress(progress, terminal, now, s.Duration.Duration)
		}
		if now >= s.Duration.Duration {
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-ticker.C:
		}
	}
	if terminal {
		_, _ = fmt.Fprintln(progress) // a progress line that cannot be written is not worth failing for
	}
	return sim.result(s, actions), nil
}

// progressEvery says how often progress is printed to w, and whether w is a terminal: there one line
// is rewritten every second; in a log, a line of its own every ten seconds.
func progressEvery(w io.Writer) (time.Duration, bool) {
	if _, _, err := term.TerminalSize(w); err == nil {
		return time.Second, true
	}
	return 10 * time.Second, false
}

// sample records each queue's running cpu, pending pods, deserved cpu and decayed usage: the
// deserved share and the usage as the scheduler holds them now (its live view), the deserved share
// as the queue's status last said while the view is not served yet.
func (sim *simulation) sample(ctx context.Context, now time.Duration) error {
	list, err := sim.queues.SchedulingV1beta1().Queues().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("sample the queues: %w", err)
	}
	deserved, usage := map[string]float64{}, map[string]float64{}
	for _, q := range list.Items {
		deserved[q.Name] = q.Status.Deserved.Cpu().AsApproximateFloat64()
	}
	if live, err := sim.queues.VisibilityV1beta1().QueueSummaries().List(ctx, metav1.ListOptions{}); err == nil {
		for _, s := range live.Items {
			deserved[s.Name] = s.Deserved.Cpu().AsApproximateFloat64()
			// Real cpu-seconds of a scheduler on the real clock: simulated ones are scale times as
			// many.
			usage[s.Name] = s.Usage.Cpu().AsApproximateFloat64() * sim.clock.scale / 3600
		}
	}
	running, pending := sim.recorder.live()
	for _, q := range list.Items {
		if !sim.watched[q.Name] {
			continue
		}
		sim.samples = append(sim.samples, Sample{At: now, Queue: q.Name, State: string(q.EffectiveState()),
			Allocated: running[q.Name], Deserved: deserved[q.Name], Pending: pending[q.Name], Usage: usage[q.Name]})
	}
	return nil
}

func (sim *simulation) printProgress(w io.Writer, terminal bool, now, end time.Duration) {
	running, pending := sim.recorder.live()
	busy, waiting := 0.0, 0
	for _, cpu := range running {
		busy += cpu
	}
	for _, n := range pending {
		waiting += n
	}
	sim.recorder.mu.Lock()
	evicted := 0
	for _, n := range sim.recorder.evictions {
		evicted += n
	}
	sim.recorder.mu.Unlock()
	line := fmt.Sprintf("t=%s/%s  running %.0f of %.0f cpu  pending pods %d  evictions %d",
		now.Truncate(time.Second), end, busy, sim.capacity, waiting, evicted)
	if terminal {
		_, _ = fmt.Fprintf(w, "\r%s   ", line)
		return
	}
	_, _ = fmt.Fprintln(w, line)
}

// act carries out an operator's action.
func (sim *simulation) act(ctx context.Context, a *Action) error {
	api := sim.queues.SchedulingV1beta1().Queues()
	var queue, patch string
	switch {
	case a.Suspend != "":
		queue, patch = a.Suspend, `{"spec":{"state":"Suspended"}}`
	case a.Resume != "":
		queue, patch = a.Resume, `{"spec":{"state":"Open"}}`
	case a.Open != "":
		queue, patch = a.Open, `{"spec":{"state":"Open"}}`
	case a.Close != "":
		queue, patch = a.Close, `{"spec":{"state":"Closed"}}`
	case a.Weight != nil:
		queue, patch = a.Weight.Queue, fmt.Sprintf(`{"spec":{"weight":%d}}`, a.Weight.Value)
	}
	_, err := api.Patch(ctx, queue, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	return err
}

// describe says what an action does, as the report lists it.
func (a *Action) describe() string {
	switch {
	case a.Suspend != "":
		return "suspend " + a.Suspend
	case a.Resume != "":
		return "resume " + a.Resume
	case a.Open != "":
		return "open " + a.Open
	case a.Close != "":
		return "close " + a.Close
	}
	return fmt.Sprintf("weight %s=%d", a.Weight.Queue, a.Weight.Value)
}
