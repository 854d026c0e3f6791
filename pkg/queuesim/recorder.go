package queuesim

import (
	"sort"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/controller"
	"github.com/queue-scheduler/queue-scheduler/pkg/gangs"
)

// QueueLabelKey is the label that carries a simulated pod's queue, so the recorder need not resolve
// it; the scheduler reads the same label (or the pod's PodGroup or QueueUnit).
const QueueLabelKey = "queuesim.queue-scheduler.io/queue"

// podRecord is what the recorder knows of one pod.
type podRecord struct {
	queue   string
	cpu     float64
	created time.Duration
	bound   bool
	done    bool
}

// recorder follows pods and PodGroups and keeps, per queue, what the report needs.
type recorder struct {
	clock *clock

	mu        sync.Mutex
	pods      map[types.UID]*podRecord
	waits     map[string][]time.Duration // per queue, creation to binding, simulated
	gangWaits map[string][]time.Duration // per queue, a PodGroup's creation to minMember bound
	evictions map[string]int
	completed map[string]int
	failed    map[string]int
	gangs     map[string]*gangRecord // by namespace/name
	// podStarts is when each pod was first bound, by name; jobStarts, when the first pod of each job
	// (JobLabelKey) was.
	podStarts map[string]time.Duration
	jobStarts map[string]time.Duration
}

// gangRecord is one PodGroup's fate.
type gangRecord struct {
	queue   string
	created time.Duration
	group   *schedulingv1beta1.PodGroup
	bound   gangs.Members
	running bool
	// started is when its bound members made it whole (gangs.Complete), once running.
	started   time.Duration
	completed bool
	timedOut  bool
	// reserved: the gang's Reserved condition said StartPlanned; firstStart is the start the first
	// one written promised.
	reserved   bool
	firstStart time.Duration
}

func newRecorder(c *clock) *recorder {
	return &recorder{clock: c, pods: map[types.UID]*podRecord{}, waits: map[string][]time.Duration{}, gangWaits: map[string][]time.Duration{},
		evictions: map[string]int{}, completed: map[string]int{}, failed: map[string]int{}, gangs: map[string]*gangRecord{},
		podStarts: map[string]time.Duration{}, jobStarts: map[string]time.Duration{}}
}

func (r *recorder) watchPods(pods cache.SharedIndexInformer) error {
	_, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    r.onPod,
		UpdateFunc: func(_, obj any) { r.onPod(obj) },
		DeleteFunc: r.onPodDelete,
	})
	return err
}

func (r *recorder) onPod(obj any) {
	pod, ok := obj.(*v1.Pod)
	if !ok || pod.Labels[QueueLabelKey] == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := r.pods[pod.UID]
	if rec == nil {
		rec = &podRecord{queue: pod.Labels[QueueLabelKey], cpu: podCPU(pod), created: r.clock.now()}
		r.pods[pod.UID] = rec
	}
	if pod.Spec.NodeName != "" && !rec.bound {
		rec.bound = true
		now := r.clock.now()
		r.waits[rec.queue] = append(r.waits[rec.queue], now-rec.created)
		r.memberBound(pod)
		if _, ok := r.podStarts[pod.Name]; !ok {
			r.podStarts[pod.Name] = now
		}
		if job := pod.Labels[JobLabelKey]; job != "" {
			if _, ok := r.jobStarts[job]; !ok {
				r.jobStarts[job] = now
			}
		}
	}
	if !rec.done && (pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed) {
		rec.done = true
		if pod.Status.Phase == v1.PodSucceeded {
			r.completed[rec.queue]++
		} else {
			r.failed[rec.queue]++
		}
	}
}

// memberBound counts a bound member of its PodGroup; the gang's wait ends when its bound members
// make it whole.
func (r *recorder) memberBound(pod *v1.Pod) {
	g := r.gangs[schedulingv1beta1.PodGroupKey(pod)]
	if g == nil || g.running {
		return
	}
	g.bound.Add(pod)
	if gangs.Complete(g.group, g.bound) {
		g.running, g.started = true, r.clock.now()
		r.gangWaits[g.queue] = append(r.gangWaits[g.queue], r.clock.now()-g.created)
	}
}

// onPodDelete counts a bound pod deleted before it finished as evicted.
func (r *recorder) onPodDelete(obj any) {
	pod, ok := unwrapPod(obj)
	if !ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := r.pods[pod.UID]
	if rec == nil {
		return
	}
	if rec.bound && !rec.done {
		r.evictions[rec.queue]++
	}
	delete(r.pods, pod.UID)
}

func (r *recorder) watchPodGroups(groups cache.SharedIndexInformer) error {
	_, err := groups.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    r.onPodGroup,
		UpdateFunc: func(_, obj any) { r.onPodGroup(obj) },
	})
	return err
}

func (r *recorder) onPodGroup(obj any) {
	pg, ok := obj.(*schedulingv1beta1.PodGroup)
	if !ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	key := pg.Namespace + "/" + pg.Name
	g := r.gangs[key]
	if g == nil {
		g = &gangRecord{queue: pg.Spec.Queue, created: r.clock.now(), group: pg}
		r.gangs[key] = g
	}
	g.completed = g.completed || pg.Status.Phase == schedulingv1beta1.PodGroupCompleted
	for _, c := range pg.Status.Conditions {
		if strings.Contains(c.Message, "timed out") {
			g.timedOut = true
		}
		// The controller writes the condition as the plan is published: the first one written is
		// the start the first plan promised.
		if start, ok := controller.ReservedStart(c, time.Now()); ok && !g.reserved {
			g.reserved, g.firstStart = true, r.clock.simulated(start)
		}
	}
}

// live sums, per queue, the cpu of running pods and counts the pending ones.
func (r *recorder) live() (running map[string]float64, pending map[string]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	running, pending = map[string]float64{}, map[string]int{}
	for _, rec := range r.pods {
		switch {
		case rec.done:
		case rec.bound:
			running[rec.queue] += rec.cpu
		default:
			pending[rec.queue]++
		}
	}
	return running, pending
}

// percentile returns the p-th percentile (0–100) of ds, or 0 for none.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	sorted := append([]time.Duration(nil), ds...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	i := int(p / 100 * float64(len(sorted)-1))
	return sorted[i]
}

func podCPU(pod *v1.Pod) float64 {
	total := 0.0
	for _, c := range pod.Spec.Containers {
		if q, ok := c.Resources.Requests[v1.ResourceCPU]; ok {
			total += q.AsApproximateFloat64()
		}
	}
	return total
}
