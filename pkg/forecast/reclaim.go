package forecast

import (
	"math"
	"slices"

	"github.com/queue-scheduler/queue-scheduler/pkg/podfit"
	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
)

// reclaim plays the Reclaim plugin for a pod that fits no node: a pod of a queue below its deserved
// share takes back room from reclaimable queues above theirs, never more than each holds above its
// share. On the first node, in order, where the pod fits once such runs leave (those that end last
// first), they leave now, and reclaim returns their queues, whose values in snap are then out of
// date; the pod is then placed as any other. Gangs are not played: they wait for room.
func (w *world) reclaim(work *Work, snap *policy.Snapshot) []string {
	if len(work.Members) != 1 {
		return nil
	}
	m := work.Members[0]
	if !policy.UnderShare(snap, work.Queue, w.queues.list(m.Requests)) {
		return nil
	}
	spare := w.queues.spare(snap, work.Queue)
	if len(spare) == 0 {
		return nil
	}
	for n := range w.free {
		if w.s.Nodes[n].Cordoned || m.Eligible != nil && !m.Eligible[n] {
			continue
		}
		if victims := w.victimsOn(n, m.Requests, spare); victims != nil {
			var queues []string
			for _, v := range victims {
				spare[v.queue].Add(v.gives, -1)
				w.leave(v)
				if !slices.Contains(queues, v.queue) {
					queues = append(queues, v.queue)
				}
			}
			return queues
		}
	}
	return nil
}

// victimsOn are the runs on node n whose leaving lets req fit there, those that end last first,
// within what each queue holds above its share (spare); nil when none do.
func (w *world) victimsOn(n int, req Vector, spare map[string]Vector) []*run {
	var candidates []*run
	kept := w.running[n][:0]
	for _, r := range w.running[n] {
		if r.gone {
			continue
		}
		kept = append(kept, r)
		if _, ok := spare[r.queue]; ok {
			candidates = append(candidates, r)
		}
	}
	w.running[n] = kept
	slices.SortStableFunc(candidates, laterFirst)
	room, taken := w.free[n].Clone(), map[string]Vector{}
	var victims []*run
	for _, r := range candidates {
		if req.Fits(room) {
			break
		}
		used := taken[r.queue].Clone()
		if used == nil {
			used = make(Vector, len(r.gives))
		}
		used.Add(r.gives, 1)
		if !used.Fits(spare[r.queue]) {
			continue
		}
		taken[r.queue] = used
		room.Add(r.gives, 1)
		victims = append(victims, r)
	}
	if !req.Fits(room) {
		return nil
	}
	return victims
}

// laterFirst orders runs by end, the latest first; a run without end is last of all to end.
func laterFirst(a, b *run) int {
	switch {
	case a.end.Equal(b.end):
		return 0
	case a.end.IsZero():
		return -1
	case b.end.IsZero():
		return 1
	case a.end.After(b.end):
		return -1
	}
	return 1
}

// spare is what each reclaimable queue but except holds above its deserved share in snap, by
// resource; the pod count is not bounded.
func (q *queues) spare(snap *policy.Snapshot, except string) map[string]Vector {
	out := map[string]Vector{}
	for _, name := range q.leaves {
		qs := q.byName[name]
		v := snap.Queue(name)
		if name == except || !qs.spec.Reclaimable || v == nil {
			continue
		}
		above := policy.AboveShare(v.Allocated, nil, v.Deserved)
		if len(above) == 0 {
			continue
		}
		out[name] = podfit.Amounts(q.dims, above, math.MaxInt64/2)
	}
	return out
}
