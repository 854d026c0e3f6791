package visibility

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"

	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
)

const (
	// historyLength is how many of the last events a watch may resume from; a watch from an older
	// resourceVersion is answered 410 Gone, and its client lists again.
	historyLength = 1024
	// watchBuffer is how many events a watcher may fall behind (beyond its initial events) before it
	// is ended; its client resumes from the last event it read.
	watchBuffer = 1024
	// bookmarkInterval is how often a watch that allows bookmarks is told the view's version, so
	// that one whose selector lets few events through resumes from a version the history holds.
	bookmarkInterval = time.Minute
)

// feed turns the source's notices of changed queues into watch events of QueueSummaries, at the
// moment of the change: the source's summary of each queue it was told of is compared with the
// last one it sent, and a difference is an event. Lists and gets read the summaries the events
// showed, at the version of the last event: a watch from a list's version misses nothing.
//
// ResourceVersions are this replica's own: a counter that starts at the replica's start time in
// nanoseconds, so that a version another replica (or an earlier run) gave is never mistaken for one
// of these. A watch that resumes from a version this replica does not hold is answered 410 Gone.
type feed struct {
	source  Source
	started atomic.Bool

	mu       sync.Mutex
	rv       uint64                                     // the last event's resourceVersion
	history  ring                                       // the last events, oldest first
	shown    map[string]*visibilityv1beta1.QueueSummary // each queue as the last event showed it; never changed in place
	watchers map[*watcher]struct{}

	// dirty holds the queues told of since the last flush, under a lock of its own: the scheduler
	// tells of changes from its hot paths and never waits for a watcher.
	dirtyMu sync.Mutex
	dirty   map[string]bool
	wake    chan struct{}
}

func newFeed(source Source) *feed {
	return &feed{
		source:   source,
		rv:       uint64(time.Now().UnixNano()),
		shown:    map[string]*visibilityv1beta1.QueueSummary{},
		watchers: map[*watcher]struct{}{},
		dirty:    map[string]bool{},
		wake:     make(chan struct{}, 1),
	}
}

// run takes every queue as it is once synced, then sends the changes until ctx ends, and ends every
// watch then.
func (f *feed) run(ctx context.Context, synced func() bool) {
	defer f.stopAll()
	if err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
		return synced(), nil
	}); err != nil {
		return
	}
	f.start()
	bookmarks := time.NewTicker(bookmarkInterval)
	defer bookmarks.Stop()
	for {
		f.flush()
		select {
		case <-ctx.Done():
			return
		case <-f.wake:
		case <-bookmarks.C:
			f.bookmark()
		}
	}
}

// start takes every queue as it is now, as what the changes are compared with.
func (f *feed) start() {
	summaries := f.source.QueueSummaries()
	f.mu.Lock()
	for i := range summaries {
		f.shown[summaries[i].Name] = &summaries[i]
	}
	f.mu.Unlock()
	f.started.Store(true)
}

// changed tells the feed that what the view shows of queue may have changed. It does not block.
func (f *feed) changed(queue string) {
	f.dirtyMu.Lock()
	f.dirty[queue] = true
	f.dirtyMu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// flush sends an event for each queue told of whose summary differs from the last one sent.
func (f *feed) flush() {
	f.dirtyMu.Lock()
	dirty := f.dirty
	f.dirty = map[string]bool{}
	f.dirtyMu.Unlock()
	for name := range dirty {
		summary, exists := f.source.QueueSummary(name)
		f.publish(name, summary, exists)
	}
}

// publish compares a queue's summary with the last one sent, and sends the difference. A queue
// deleted and created again under its name between two flushes is sent as deleted, then added.
func (f *feed) publish(name string, summary *visibilityv1beta1.QueueSummary, exists bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	prev := f.shown[name]
	switch {
	case exists && prev == nil:
		f.send(event{typ: watch.Added, obj: summary})
	case exists && prev.UID != summary.UID:
		f.send(event{typ: watch.Deleted, obj: prev.DeepCopy()})
		f.send(event{typ: watch.Added, obj: summary})
	case exists:
		summary.ResourceVersion = prev.ResourceVersion
		if !apiequality.Semantic.DeepEqual(prev, summary) {
			f.send(event{typ: watch.Modified, obj: summary, prev: prev})
		}
	case prev != nil:
		f.send(event{typ: watch.Deleted, obj: prev.DeepCopy()})
	}
}

// send gives e the next version, keeps it, and offers it to every watcher.
func (f *feed) send(e event) {
	f.rv++
	e.rv = f.rv
	e.obj.ResourceVersion = strconv.FormatUint(f.rv, 10)
	if e.typ == watch.Deleted {
		delete(f.shown, e.obj.Name)
	} else {
		f.shown[e.obj.Name] = e.obj
	}
	f.history.add(e)
	for w := range f.watchers {
		if !w.offer(e) {
			f.removeLocked(w) // too far behind: its client resumes from what it read
		}
	}
}

// bookmark tells every watch that allows bookmarks the view's version.
func (f *feed) bookmark() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for w := range f.watchers {
		if w.opts.AllowWatchBookmarks && !w.mark(f.bookmarkObject(nil)) {
			f.removeLocked(w)
		}
	}
}

func (f *feed) bookmarkObject(annotations map[string]string) *visibilityv1beta1.QueueSummary {
	return &visibilityv1beta1.QueueSummary{ObjectMeta: metav1.ObjectMeta{ResourceVersion: strconv.FormatUint(f.rv, 10), Annotations: annotations}}
}

// list is the summaries opts select, by name, as the events showed them, at the view's version.
func (f *feed) list(opts *metainternalversion.ListOptions) *visibilityv1beta1.QueueSummaryList {
	f.mu.Lock()
	defer f.mu.Unlock()
	list := &visibilityv1beta1.QueueSummaryList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.FormatUint(f.rv, 10)}}
	for _, name := range slices.Sorted(maps.Keys(f.shown)) {
		if s := f.shown[name]; selects(opts, s.ObjectMeta) {
			list.Items = append(list.Items, *s.DeepCopy())
		}
	}
	return list
}

// get is the named queue's summary as the events showed it.
func (f *feed) get(name string) (*visibilityv1beta1.QueueSummary, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.shown[name]
	if !ok {
		return nil, false
	}
	return s.DeepCopy(), true
}

// resourceVersion is the version of the view now: a list read after it shows at least its events.
func (f *feed) resourceVersion() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strconv.FormatUint(f.rv, 10)
}

// watch starts a watch of the queue summaries opts select. With no resourceVersion, "0" or
// sendInitialEvents, it starts with every queue as an Added event (then, with sendInitialEvents,
// the bookmark that ends them); from a resourceVersion it resumes after that event.
func (f *feed) watch(opts *metainternalversion.ListOptions) (watch.Interface, error) {
	if opts == nil {
		opts = &metainternalversion.ListOptions{}
	}
	rv, initial := opts.ResourceVersion, opts.ResourceVersion == "" || opts.ResourceVersion == "0"
	if opts.SendInitialEvents != nil {
		initial = *opts.SendInitialEvents
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var backlog []event
	switch {
	case initial:
		for _, name := range slices.Sorted(maps.Keys(f.shown)) {
			backlog = append(backlog, event{typ: watch.Added, obj: f.shown[name]})
		}
	case rv != "" && rv != "0":
		since, err := strconv.ParseUint(rv, 10, 64)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("resourceVersion %q: not a resourceVersion of the live view", rv))
		}
		if backlog, err = f.since(since); err != nil {
			return nil, err
		}
	}
	w := &watcher{feed: f, opts: opts, result: make(chan watch.Event, len(backlog)+watchBuffer+1)}
	for _, e := range backlog {
		w.offer(e)
	}
	if opts.SendInitialEvents != nil && *opts.SendInitialEvents && opts.AllowWatchBookmarks {
		w.mark(f.bookmarkObject(map[string]string{metav1.InitialEventsAnnotationKey: "true"}))
	}
	f.watchers[w] = struct{}{}
	return w, nil
}

// since is the events after resourceVersion rv, or 410 Gone when the history no longer holds them
// all (or rv is not this replica's).
func (f *feed) since(rv uint64) ([]event, error) {
	if rv == f.rv {
		return nil, nil
	}
	events := f.history.all()
	if rv > f.rv || len(events) == 0 || events[0].rv > rv+1 {
		return nil, apierrors.NewResourceExpired(fmt.Sprintf(
			"resourceVersion %d of the live view is too old or not of this replica; list again", rv))
	}
	for i, e := range events {
		if e.rv > rv {
			return events[i:], nil
		}
	}
	return nil, nil
}

func (f *feed) remove(w *watcher) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.removeLocked(w)
}

func (f *feed) removeLocked(w *watcher) {
	if _, ok := f.watchers[w]; ok {
		delete(f.watchers, w)
		close(w.result)
	}
}

func (f *feed) stopAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for w := range f.watchers {
		f.removeLocked(w)
	}
}

// event is one change of a queue's summary: obj is the summary after it (before it, for Deleted),
// prev the one before (nil for Added). Neither is changed once sent.
type event struct {
	rv   uint64
	typ  watch.EventType
	obj  *visibilityv1beta1.QueueSummary
	prev *visibilityv1beta1.QueueSummary
}

// ring holds the last historyLength events.
type ring struct {
	events [historyLength]event
	next   int // where the next event goes
	n      int // how many it holds
}

func (r *ring) add(e event) {
	r.events[r.next] = e
	r.next = (r.next + 1) % historyLength
	r.n = min(r.n+1, historyLength)
}

// all is the events held, oldest first.
func (r *ring) all() []event {
	out := make([]event, 0, r.n)
	for i := range r.n {
		out = append(out, r.events[(r.next-r.n+i+historyLength)%historyLength])
	}
	return out
}

// watcher is one watch: the events its selectors let through, in order, until it is stopped, falls
// too far behind or the view stops serving.
type watcher struct {
	feed   *feed
	opts   *metainternalversion.ListOptions
	result chan watch.Event
}

func (w *watcher) ResultChan() <-chan watch.Event { return w.result }
func (w *watcher) Stop()                          { w.feed.remove(w) }

// mark queues a bookmark; it is false when the watch is too far behind to take it.
func (w *watcher) mark(bookmark *visibilityv1beta1.QueueSummary) bool {
	select {
	case w.result <- watch.Event{Type: watch.Bookmark, Object: bookmark}:
		return true
	default:
		return false
	}
}

// offer queues what e means to this watch; it is false when the watch is too far behind to take it.
// A summary that comes into the selection is Added to it, one that leaves it is Deleted from it.
func (w *watcher) offer(e event) bool {
	now := selects(w.opts, e.obj.ObjectMeta)
	before := e.prev != nil && selects(w.opts, e.prev.ObjectMeta)
	typ, obj := e.typ, e.obj.DeepCopy()
	switch {
	case e.typ == watch.Modified && now && !before:
		typ = watch.Added
	case e.typ == watch.Modified && !now && before:
		// As the API server's watch cache sends it: the object as the watch last saw it.
		typ, obj = watch.Deleted, e.prev.DeepCopy()
		obj.ResourceVersion = e.obj.ResourceVersion
	case !now:
		return true
	}
	select {
	case w.result <- watch.Event{Type: typ, Object: obj}:
		return true
	default:
		return false
	}
}
