package proportion

import (
	"maps"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/cycle"
	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
)

// maxWalk is the most waiting pods of one queue looked at for room that frees.
const maxWalk = 64

// letInWait is how long a pod let in for room that freed keeps it from the younger pods of its
// queue, until its own try: it is in the active queue by then, unless something else holds it.
const letInWait = time.Second

// line keeps, queue by queue and in the queue's order, the pods that wait for room: turned away by
// the nodes after their queue admitted them, or by their queue's share. kube-scheduler tries such a
// pod again once its backoff ends, and the backoff grows with each failed try: a pod just created,
// never tried, would take room that frees before the pods that waited longer. When room frees, the
// first waiting pods of each queue that fit in it are let into the active queue at once, where the
// queue sort takes them before younger pods. A gang's members are not kept: their group is tried as
// one (Gang).
type line struct {
	mu sync.Mutex
	// queues holds each queue's waiting pods, sorted by place; queueOf, where each pod is.
	queues  map[string][]waiter
	queueOf map[types.UID]string
	// offered is the Seq of the latest room freed offered (accounting.RoomFreed).
	offered uint64
	// gaveWay holds, by queue, the pods that gave way to older ones let in, or to room on its way:
	// they are let in once one of those is tried, or room is offered.
	gaveWay map[string]map[types.UID]*v1.Pod
}

// waiter is a waiting pod, where it stands in its queue and what it asks for.
type waiter struct {
	place    policy.Place
	pod      *v1.Pod
	requests policy.Amounts
	// letIn is the room the pod was last let in for, at letInAt, until its next try reads it: it is
	// not let in again before, however long that takes.
	letIn   cycle.LetIn
	letInAt time.Time
}

// letInBy says whether the waiter was let in for room that freed and has not been tried since, at now.
func (w *waiter) letInBy(now time.Time) bool {
	return !w.letInAt.IsZero() && now.Sub(w.letInAt) < letInWait
}

// byPlace orders a waiter against a place, for slices.BinarySearchFunc.
func byPlace(w waiter, p policy.Place) int { return policy.Compare(w.place, p) }

func newLine() *line {
	return &line{queues: map[string][]waiter{}, queueOf: map[types.UID]string{}, gaveWay: map[string]map[types.UID]*v1.Pod{}}
}

func placeOf(pod *v1.Pod) policy.Place {
	return policy.Place{Priority: corev1helpers.PodPriority(pod), Since: pod.CreationTimestamp.Time,
		Namespace: pod.Namespace, Name: pod.Name}
}

// add keeps pod, which asks for requests, among queue's waiting pods.
func (l *line) add(pod *v1.Pod, queue string, requests v1.ResourceList) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if q, ok := l.queueOf[pod.UID]; ok && q != queue {
		l.removeLocked(pod, q)
	}
	if _, ok := l.queueOf[pod.UID]; !ok {
		w := waiter{place: placeOf(pod), pod: pod, requests: policy.AmountsOf(requests)}
		waiting := l.queues[queue]
		i, _ := slices.BinarySearchFunc(waiting, w.place, byPlace)
		l.queues[queue] = slices.Insert(waiting, i, w)
		l.queueOf[pod.UID] = queue
	}
}

// find returns pod's entry in the line, or nil; call with l.mu held.
func (l *line) find(pod *v1.Pod) *waiter {
	queue, ok := l.queueOf[pod.UID]
	if !ok {
		return nil
	}
	if i := l.indexLocked(pod, queue); i >= 0 {
		return &l.queues[queue][i]
	}
	return nil
}

// indexLocked is where pod stands among queue's waiting pods, or -1. A pod deleted and created again
// under its name stands at the same place: the UID tells them apart.
func (l *line) indexLocked(pod *v1.Pod, queue string) int {
	waiting := l.queues[queue]
	place := placeOf(pod)
	i, _ := slices.BinarySearchFunc(waiting, place, byPlace)
	for ; i < len(waiting) && policy.Compare(waiting[i].place, place) == 0; i++ {
		if waiting[i].pod.UID == pod.UID {
			return i
		}
	}
	return -1
}

// remove forgets pod: it was reserved on a node, was bound, or is gone.
func (l *line) remove(pod *v1.Pod) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if q, ok := l.queueOf[pod.UID]; ok {
		l.removeLocked(pod, q)
	}
}

func (l *line) removeLocked(pod *v1.Pod, queue string) {
	waiting := l.queues[queue]
	if i := l.indexLocked(pod, queue); i >= 0 {
		waiting = slices.Delete(waiting, i, i+1)
	}
	delete(l.queueOf, pod.UID)
	delete(l.gaveWay[queue], pod.UID)
	if len(waiting) == 0 {
		delete(l.queues, queue)
		return
	}
	l.queues[queue] = waiting
}

// next returns, keyed as the scheduling queue's Activate expects, the pods to try first on the room
// freed at now: of each queue, in its order among its first maxWalk waiting pods, those that fit in
// it together, each marked as let in for it; not those let in before and not tried since (that room
// is theirs, or something other than the room holds them); then the pods that gave way. A pod
// waiting says whether a pod still waits: one the line missed leaving (deleted while it was being
// tried) is forgotten on the way.
func (l *line) next(freed accounting.RoomFreed, now time.Time, waiting func(*v1.Pod) bool) map[string]*v1.Pod {
	free := policy.AmountsOf(freed.Requests)
	out := map[string]*v1.Pod{}
	l.mu.Lock()
	defer l.mu.Unlock()
	var gone []*v1.Pod
	for _, queue := range l.queues {
		left := maps.Clone(free)
		for i := range queue[:min(len(queue), maxWalk)] {
			w := &queue[i]
			switch {
			case !waiting(w.pod):
				gone = append(gone, w.pod)
			case !w.letInAt.IsZero():
			case takes(left, w.requests):
				out[w.pod.Namespace+"/"+w.pod.Name] = w.pod
				w.letIn, w.letInAt = cycle.LetIn{Node: freed.Node, Pod: freed.Pod}, now
			}
		}
	}
	for _, pod := range gone {
		l.removeLocked(pod, l.queueOf[pod.UID])
	}
	l.offered = max(l.offered, freed.Seq)
	for queue := range l.gaveWay {
		maps.Copy(out, l.releaseLocked(queue))
	}
	return out
}

// try is what the line says of a pod tried: the room it was let in for since its last try, if it
// was (letIn, ok); whether it gives way (ahead); the pods that gave way to it, to let in now.
type try struct {
	letIn   cycle.LetIn
	ok      bool
	ahead   bool
	release map[string]*v1.Pod
}

// tried reads, as pod is tried at now, the room it was let in for since its last try, and forgets
// it. A pod its queue admitted gives way when it was not let in and an older pod of queue was and has not been
// tried since, for less than letInWait (among the first maxWalk), or when room freed up to
// freedSeq is on its way to the line, not offered yet, and an older pod waits first: it is kept
// among the pods that gave way, let in when one of those is tried or room is offered.
func (l *line) tried(pod *v1.Pod, queue string, now time.Time, freedSeq uint64, admitted bool) try {
	l.mu.Lock()
	defer l.mu.Unlock()
	var t try
	waiting := l.queues[queue]
	if i := l.indexLocked(pod, queue); i >= 0 {
		w := &waiting[i]
		if !w.letInAt.IsZero() {
			t.letIn, t.ok, t.release = w.letIn, w.letInBy(now), l.releaseLocked(queue)
			w.letIn, w.letInAt = cycle.LetIn{}, time.Time{}
		}
	}
	if !admitted {
		return t
	}
	if t.ok {
		return t
	}
	place := placeOf(pod)
	for j, w := range waiting[:min(len(waiting), maxWalk)] {
		if !policy.Ahead(w.place, place) {
			break
		}
		if w.letInBy(now) || (j == 0 && freedSeq > l.offered) {
			t.ahead = true
			if l.gaveWay[queue] == nil {
				l.gaveWay[queue] = map[types.UID]*v1.Pod{}
			}
			l.gaveWay[queue][pod.UID] = pod
			break
		}
	}
	return t
}

// releaseLocked returns, keyed as Activate expects, and forgets the pods of queue that gave way;
// call with l.mu held.
func (l *line) releaseLocked(queue string) map[string]*v1.Pod {
	out := map[string]*v1.Pod{}
	for _, pod := range l.gaveWay[queue] {
		out[pod.Namespace+"/"+pod.Name] = pod
	}
	delete(l.gaveWay, queue)
	return out
}

// held forgets that pod was let in: something holds it before its try, and the room is not its.
func (l *line) held(pod *v1.Pod) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if w := l.find(pod); w != nil {
		w.letIn, w.letInAt = cycle.LetIn{}, time.Time{}
	}
}

// takes takes requests out of left when they fit in it, and says whether they did.
func takes(left, requests policy.Amounts) bool {
	for r, n := range requests {
		if n > 0 && left[r] < n {
			return false
		}
	}
	for r, n := range requests {
		left[r] -= n
	}
	return true
}
