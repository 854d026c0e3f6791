package forecast

import (
	"container/heap"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
)

// world is one play: the room and the queues' usage as simulated time goes, the ends to come, and
// the work that still waits.
type world struct {
	s        *Snapshot
	settings Settings
	p90      bool
	horizon  time.Time
	free     []Vector
	// running are the runs on each node, in no order; a run that ended or was taken is gone.
	running [][]*run
	// reserved are the reservations' room on each node, until their gang starts; holdings the same
	// by gang.
	reserved [][]*holding
	holdings map[string][]*holding
	queues   *queues
	ends     releases
	waiting  []*Work
	started  map[string]time.Time
	// basis is what each start rests on; waitedFor, what the pass under way does: the basis of the
	// runs whose end it follows, none for the first.
	basis     map[string]Basis
	waitedFor Basis
}

// play plays the snapshot forward and returns when each piece of work starts, with every runtime
// at its median, or with p90 at its 90th percentile, and what each start rests on.
func play(s *Snapshot, settings Settings, p90 bool) (map[string]time.Time, map[string]Basis) {
	w := &world{s: s, settings: settings, p90: p90, horizon: s.Now.Add(settings.Horizon), free: make([]Vector, len(s.Nodes)),
		running: make([][]*run, len(s.Nodes)), queues: newQueues(s), started: make(map[string]time.Time, len(s.Pending)),
		basis: make(map[string]Basis, len(s.Pending))}
	w.reserve()
	for i, n := range s.Nodes {
		w.free[i] = n.Free.Clone()
		for _, r := range n.Running {
			w.queues.hold(r.Queue, r.Requests, 1)
			w.track(i, &run{queue: r.Queue, gives: r.Requests, exact: w.endOf(r.Ends), basis: r.Ends.Basis})
		}
	}
	for i := range s.Pending {
		w.waiting = append(w.waiting, &s.Pending[i])
		w.queues.ask(s.Pending[i].Queue, total(s.Pending[i].Members), 1)
	}
	slices.SortStableFunc(w.waiting, func(a, b *Work) int { return policy.Compare(a.Place, b.Place) })
	w.run()
	return w.started, w.basis
}

// run starts what it can now, then moves from end to end until nothing waits or the horizon. The
// runs that end within one step of the resolution leave in the order of their exact ends (those at
// the same instant together), each time followed by a pass over the waiting work at that exact end,
// as the scheduler fills the room of each pod that ends before the next ends: a large pod waiting
// does not take the room of several small ones that end apart, while a small one behind it fits the
// room of each, and a chain of short runs keeps its own pace, not the step's. The fair shares are
// computed again at each step, once its first runs left.
func (w *world) run() {
	w.startWhatFits(w.s.Now, w.queues.snapshot())
	for len(w.waiting) > 0 && w.ends.Len() > 0 {
		now := w.ends[0].at
		if now.After(w.horizon) {
			return
		}
		var snap *policy.Snapshot
		for len(w.waiting) > 0 && w.ends.Len() > 0 && !w.ends[0].at.After(now) {
			at := latestOf(w.ends[0].run.exact, w.s.Now)
			queues := w.leaveNext()
			switch {
			case len(queues) == 0:
				continue
			case snap == nil:
				snap = w.queues.snapshot()
			default:
				for _, q := range queues {
					snap = w.queues.recounted(snap, q)
				}
			}
			snap = w.startWhatFits(at, snap)
		}
	}
}

// latestOf is the later of a and b.
func latestOf(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// leaveNext gives back the room of the runs that end first, at the same instant (a piece of work's
// pods, started together), and returns the queues of those that had not left already (taken by a
// reclaim); what starts next waits for their ends.
func (w *world) leaveNext() []string {
	var queues []string
	exact := w.ends[0].run.exact
	w.waitedFor = Basis{}
	for w.ends.Len() > 0 && w.ends[0].run.exact.Equal(exact) {
		r := heap.Pop(&w.ends).(release).run
		if !r.gone {
			w.waitedFor = Weakest(w.waitedFor, r.basis)
			if !slices.Contains(queues, r.queue) {
				queues = append(queues, r.queue)
			}
		}
		w.leave(r)
	}
	return queues
}

// startWhatFits takes the waiting work in order and starts each piece its queue admits and whose
// members fit, at now. Within one pass a refusal stands for any later work of the same queue that
// asks for at least as much, and a misfit for any later pod as large: a start only takes room.
func (w *world) startWhatFits(now time.Time, snap *policy.Snapshot) *policy.Snapshot {
	refused, unfit := map[string][]Vector{}, []Vector(nil)
	backfill := w.backfillClaim(now, snap)
	kept := w.waiting[:0]
	for _, work := range w.waiting {
		req := total(work.Members)
		memo := work.Queue
		if whole(work) {
			memo += "/whole"
		}
		if covers(refused[memo], req) || len(work.Members) == 1 && work.Members[0].Eligible == nil && covers(unfit, req) {
			kept = append(kept, work)
			continue
		}
		if policy.Admit(snap, work.Queue, w.queues.list(req), w.asWork(work, backfill)) != nil {
			refused[memo] = append(refused[memo], req)
			kept = append(kept, work)
			continue
		}
		placed, ok := w.fit(work, now)
		if !ok {
			victims := w.reclaim(work, snap)
			for _, q := range victims {
				snap = w.queues.recounted(snap, q)
			}
			if len(victims) > 0 {
				backfill = w.backfillClaim(now, snap)
				placed, ok = w.fit(work, now)
			}
		}
		if !ok {
			if len(work.Members) == 1 && work.Members[0].Eligible == nil {
				unfit = append(unfit, req)
			}
			kept = append(kept, work)
			continue
		}
		w.start(work, placed, now)
		snap = w.queues.recounted(snap, work.Queue)
		backfill = w.backfillClaim(now, snap) // what the queues hold changed, and a gang's reservations go as it starts
	}
	w.waiting = kept
	return snap
}

// asWork describes work to the policy: a unit admitted whole, or a pod, admitted as the scheduler
// admits one, beside the claims the reservations keep (backfill).
func (w *world) asWork(work *Work, backfill v1.ResourceList) policy.Work {
	if whole(work) {
		return policy.Work{Whole: true}
	}
	return policy.Work{Backfill: backfill}
}

// whole says whether work is admitted whole: a unit, or pods that start together.
func whole(work *Work) bool { return work.Unit || len(work.Members) > 1 }

// covers says whether req asks for at least as much as one of smaller, in every resource.
func covers(smaller []Vector, req Vector) bool {
	for _, s := range smaller {
		if s.Fits(req) {
			return true
		}
	}
	return false
}

// start runs work from now on the nodes placed, until its runtime ends: its end rests on its
// runtime and on what its start waited for.
func (w *world) start(work *Work, placed []int, now time.Time) {
	w.started[work.Key] = now
	w.basis[work.Key] = w.waitedFor
	w.release(work.Key)
	req := total(work.Members)
	w.queues.ask(work.Queue, req, -1)
	w.queues.hold(work.Queue, req, 1)
	runtime, basis := w.runtimeOf(work.Runtime)
	end, basis := now.Add(runtime), Weakest(w.waitedFor, basis)
	for i, m := range work.Members {
		w.free[placed[i]].Add(m.Requests, -1)
		w.track(placed[i], &run{queue: work.Queue, gives: m.Requests, exact: end, basis: basis})
	}
}

// run is one pod running on a node: its queue, what it holds, and when it ends (zero: never),
// rounded up to the resolution and exactly, and what its end rests on.
type run struct {
	node       int
	queue      string
	gives      Vector
	end, exact time.Time
	basis      Basis
	gone       bool
}

// track counts r as running on node n, with its end to come.
func (w *world) track(n int, r *run) {
	r.node = n
	w.running[n] = append(w.running[n], r)
	if !r.exact.IsZero() {
		r.end = w.rounded(r.exact)
		heap.Push(&w.ends, release{at: r.end, run: r})
	}
}

// leave gives back the room of a run that ended or was taken, once.
func (w *world) leave(r *run) {
	if r.gone {
		return
	}
	r.gone = true
	w.free[r.node].Add(r.gives, 1)
	w.queues.hold(r.queue, r.gives, -1)
}

// endOf is a running pod's end in this play.
func (w *world) endOf(e Ends) time.Time {
	if w.p90 {
		return e.P90
	}
	return e.P50
}

// runtimeOf is a piece of work's runtime in this play, and what it was read from: its own, or the
// default.
func (w *world) runtimeOf(r Runtime) (time.Duration, Basis) {
	if r.P50 == 0 && r.P90 == 0 {
		r = w.settings.DefaultRuntime
		r.Basis = Basis{Source: SourceDefault}
	}
	if w.p90 {
		return r.P90, r.Basis
	}
	return r.P50, r.Basis
}

// rounded is t rounded up to the resolution, and no earlier than the snapshot: a pod past its end
// is about to end.
func (w *world) rounded(t time.Time) time.Time {
	if t.Before(w.s.Now) {
		t = w.s.Now
	}
	if step := w.settings.Resolution; step > 0 {
		if r := t.Truncate(step); r.Before(t) {
			t = r.Add(step)
		}
	}
	return t
}

// release is a run's end, at its step.
type release struct {
	at  time.Time
	run *run
}

// releases orders the ends, earliest first; those of one step by their exact ends.
type releases []release

func (h releases) Len() int      { return len(h) }
func (h releases) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *releases) Push(x any)   { *h = append(*h, x.(release)) }
func (h *releases) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func (h releases) Less(i, j int) bool {
	a, b := h[i], h[j]
	if !a.at.Equal(b.at) {
		return a.at.Before(b.at)
	}
	return a.run.exact.Before(b.run.exact)
}
