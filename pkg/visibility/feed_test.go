package visibility

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
)

// startedFeed is a feed of literal queues a and b (a labelled team=ml) that took them as they are.
func startedFeed() (*feed, *source) {
	src := literal()
	return started(src), src
}

// allocate sets queue i's allocated CPU and tells the feed, which sends what changed.
func allocate(f *feed, src *source, i int, cpu string) {
	src.queues[i].Allocated = v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}
	f.changed(src.queues[i].Name)
	f.flush()
}

// drain reads the events queued on w now.
func drain(w watch.Interface) []watch.Event {
	var out []watch.Event
	for {
		select {
		case e, ok := <-w.ResultChan():
			if !ok {
				return out
			}
			out = append(out, e)
		default:
			return out
		}
	}
}

// describe writes events as "TYPE name cpu" for comparison.
func describe(events []watch.Event) []string {
	var out []string
	for _, e := range events {
		s := e.Object.(*visibilityv1beta1.QueueSummary)
		out = append(out, string(e.Type)+" "+s.Name+" "+s.Allocated.Cpu().String())
	}
	return out
}

func equal(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}

// A watch with no resourceVersion starts with every queue, then gets each change as it happens with
// a version of its own; a change that leaves the summary as it was sends nothing.
func TestWatchSendsTheQueuesThenEachChange(t *testing.T) {
	f, src := startedFeed()
	w, err := f.watch(&metainternalversion.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	allocate(f, src, 1, "3")
	allocate(f, src, 1, "3") // nothing changed
	src.queues = src.queues[:1]
	f.changed("b")
	f.flush()
	events := drain(w)
	want := []string{"ADDED a 2", "ADDED b 0", "MODIFIED b 3", "DELETED b 3"}
	if got := describe(events); !equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	first, _ := strconv.ParseUint(events[2].Object.(*visibilityv1beta1.QueueSummary).ResourceVersion, 10, 64)
	second, _ := strconv.ParseUint(events[3].Object.(*visibilityv1beta1.QueueSummary).ResourceVersion, 10, 64)
	if first == 0 || second != first+1 || f.resourceVersion() != strconv.FormatUint(second, 10) {
		t.Errorf("versions %d then %d, view at %s: want one after the other, the view at the last", first, second, f.resourceVersion())
	}
}

// A watch from a list's resourceVersion gets exactly the changes after it; one from the version
// now gets nothing until the next change; a version the history no longer holds, or another
// replica's, is 410 Gone; one that is no number is 400.
func TestWatchResumesFromAResourceVersion(t *testing.T) {
	f, src := startedFeed()
	listed := f.resourceVersion()
	allocate(f, src, 0, "5")
	now := f.resourceVersion()
	allocate(f, src, 1, "7")
	w, err := f.watch(&metainternalversion.ListOptions{ResourceVersion: listed})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := describe(drain(w)), []string{"MODIFIED a 5", "MODIFIED b 7"}; !equal(got, want) {
		t.Errorf("from the list's version: %v, want %v", got, want)
	}
	w.Stop()
	w, err = f.watch(&metainternalversion.ListOptions{ResourceVersion: now})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := describe(drain(w)), []string{"MODIFIED b 7"}; !equal(got, want) {
		t.Errorf("from the middle: %v, want %v", got, want)
	}
	w.Stop()
	for i := range historyLength {
		allocate(f, src, 0, strconv.Itoa(10+i))
	}
	for _, rv := range []string{listed, "99999999999999999999"[:19]} {
		if _, err := f.watch(&metainternalversion.ListOptions{ResourceVersion: rv}); !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
			t.Errorf("watch from %s: %v, want 410 Gone", rv, err)
		}
	}
	if _, err := f.watch(&metainternalversion.ListOptions{ResourceVersion: "yesterday"}); !apierrors.IsBadRequest(err) {
		t.Errorf("watch from a version that is no number: %v, want 400", err)
	}
}

// A summary that comes into a watch's selector is Added to it, one that leaves it Deleted from it,
// and one outside it sends nothing.
func TestWatchKeepsToItsSelector(t *testing.T) {
	f, src := startedFeed()
	w, err := f.watch(&metainternalversion.ListOptions{LabelSelector: labels.SelectorFromSet(labels.Set{"team": "ml"})})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	allocate(f, src, 1, "1") // b is not team=ml
	src.queues[1].Labels = map[string]string{"team": "ml"}
	allocate(f, src, 1, "2")
	src.queues[0].Labels = nil
	allocate(f, src, 0, "4")
	events := drain(w)
	// The one that left is sent as the watch last saw it, at the version of the change.
	want := []string{"ADDED a 2", "ADDED b 2", "DELETED a 2"}
	if got := describe(events); !equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	if rv := events[2].Object.(*visibilityv1beta1.QueueSummary).ResourceVersion; rv != f.resourceVersion() {
		t.Errorf("the deletion is at version %s, want the change's %s", rv, f.resourceVersion())
	}
}

// A list shows the queues as the events showed them, at the version of the last event: a change
// not sent yet is not in it, and one undone before it was sent is in neither, so a watch from the
// list's version misses nothing and sends nothing twice.
func TestListAndWatchAgree(t *testing.T) {
	f, src := startedFeed()
	before := f.resourceVersion()
	src.queues[0].Allocated = v1.ResourceList{v1.ResourceCPU: resource.MustParse("9")}
	f.changed("a")
	list := f.list(nil)
	if cpu := list.Items[0].Allocated.Cpu().String(); cpu != "2" || list.ResourceVersion != before {
		t.Errorf("before the change was sent: a at cpu %s, version %s; want cpu 2 at %s", cpu, list.ResourceVersion, before)
	}
	src.queues[0].Allocated = v1.ResourceList{v1.ResourceCPU: resource.MustParse("2"), v1.ResourceMemory: resource.MustParse("1Gi")}
	f.flush()
	if f.resourceVersion() != before {
		t.Errorf("a change undone before it was sent moved the view from %s to %s", before, f.resourceVersion())
	}
	allocate(f, src, 0, "5")
	list = f.list(nil)
	if cpu := list.Items[0].Allocated.Cpu().String(); cpu != "5" || list.ResourceVersion != f.resourceVersion() || list.Items[0].ResourceVersion != list.ResourceVersion {
		t.Errorf("after the change was sent: a at cpu %s, version %s (item %s); want cpu 5 at %s", cpu, list.ResourceVersion, list.Items[0].ResourceVersion, f.resourceVersion())
	}
	if got, ok := f.get("a"); !ok || got.Allocated.Cpu().String() != "5" {
		t.Errorf("get a: %v, %t; want cpu 5", got, ok)
	}
}

// A queue deleted and created again under its name between two flushes is a new object: it is
// sent as deleted, then added.
func TestQueueCreatedAgainIsDeletedThenAdded(t *testing.T) {
	f, src := startedFeed()
	w, err := f.watch(&metainternalversion.ListOptions{ResourceVersion: f.resourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	src.queues[1].UID = "new"
	allocate(f, src, 1, "1")
	if got, want := describe(drain(w)), []string{"DELETED b 0", "ADDED b 1"}; !equal(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
}

// A watch that allows bookmarks is told the view's version now and then, others are not.
func TestBookmarksTellTheVersion(t *testing.T) {
	f, _ := startedFeed()
	marked, err := f.watch(&metainternalversion.ListOptions{ResourceVersion: f.resourceVersion(), AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer marked.Stop()
	plain, err := f.watch(&metainternalversion.ListOptions{ResourceVersion: f.resourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Stop()
	f.bookmark()
	events := drain(marked)
	if len(events) != 1 || events[0].Type != watch.Bookmark || events[0].Object.(*visibilityv1beta1.QueueSummary).ResourceVersion != f.resourceVersion() {
		t.Errorf("a watch that allows bookmarks: %v, want one at %s", events, f.resourceVersion())
	}
	if events := drain(plain); len(events) != 0 {
		t.Errorf("a watch that does not allow bookmarks: %v", events)
	}
}

// Telling the feed of a change never waits for it: the scheduler tells it from Reserve.
func TestChangedDoesNotWaitForTheFeed(t *testing.T) {
	f, _ := startedFeed()
	f.mu.Lock() // as while sending to many watchers
	defer f.mu.Unlock()
	f.changed("a") // would deadlock, failing the test by its timeout, if it took the feed's lock
	f.dirtyMu.Lock()
	defer f.dirtyMu.Unlock()
	if !f.dirty["a"] {
		t.Error("the change was not kept")
	}
}

// With sendInitialEvents (a watch-list), the queues are followed by the bookmark that ends them,
// at the view's version.
func TestWatchListEndsTheInitialEventsWithABookmark(t *testing.T) {
	f, _ := startedFeed()
	w, err := f.watch(&metainternalversion.ListOptions{SendInitialEvents: ptr.To(true), AllowWatchBookmarks: true,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	events := drain(w)
	if len(events) != 3 || events[2].Type != watch.Bookmark {
		t.Fatalf("events %v, want a, b and a bookmark", events)
	}
	bookmark := events[2].Object.(*visibilityv1beta1.QueueSummary)
	if bookmark.Annotations[metav1.InitialEventsAnnotationKey] != "true" || bookmark.ResourceVersion != f.resourceVersion() {
		t.Errorf("bookmark %+v, want the end of the initial events at %s", bookmark.ObjectMeta, f.resourceVersion())
	}
}

// A watcher that falls too far behind is ended, so the feed never waits for it; its client resumes
// from the last event it read. One that stops is no longer sent anything.
func TestWatchTooFarBehindIsEnded(t *testing.T) {
	f, src := startedFeed()
	slow, err := f.watch(&metainternalversion.ListOptions{ResourceVersion: f.resourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	stopped, err := f.watch(&metainternalversion.ListOptions{ResourceVersion: f.resourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	stopped.Stop()
	for i := range watchBuffer + 2 {
		allocate(f, src, 0, strconv.Itoa(i+1))
	}
	if n := len(drain(slow)); n != watchBuffer+1 {
		t.Errorf("the slow watcher read %d events, want its buffer of %d and then its end", n, watchBuffer+1)
	}
	if _, open := <-slow.ResultChan(); open {
		t.Error("the slow watcher is still open")
	}
	if _, open := <-stopped.ResultChan(); open {
		t.Error("a stopped watcher was sent an event")
	}
	if len(f.watchers) != 0 {
		t.Errorf("%d watchers held, want none", len(f.watchers))
	}
}

// Changes told from many goroutines at once, while watches and lists read: once the changes stop,
// the watch's last event and the list show each queue as it ended.
func TestFeedUnderConcurrentChanges(t *testing.T) {
	src := literal()
	f := newFeed(src)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go f.run(ctx, func() bool { return true })
	if err := wait.PollUntilContextTimeout(ctx, time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return f.started.Load(), nil
	}); err != nil {
		t.Fatal("the feed never started")
	}
	w, err := f.watch(&metainternalversion.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	last := map[string]string{}
	var reader sync.WaitGroup
	reader.Go(func() {
		for e := range w.ResultChan() {
			s := e.Object.(*visibilityv1beta1.QueueSummary)
			last[s.Name] = s.Allocated.Cpu().String()
		}
	})
	var writers sync.WaitGroup
	for g := range 4 {
		writers.Go(func() {
			for i := range 200 {
				q := (g + i) % 2
				src.mu.Lock()
				src.queues[q].Allocated = v1.ResourceList{v1.ResourceCPU: resource.MustParse(strconv.Itoa(g*1000 + i))}
				name := src.queues[q].Name
				src.mu.Unlock()
				f.changed(name)
				if i%50 == 0 {
					f.list(nil)
				}
			}
		})
	}
	writers.Wait()
	src.mu.Lock()
	want := map[string]string{"a": src.queues[0].Allocated.Cpu().String(), "b": src.queues[1].Allocated.Cpu().String()}
	src.mu.Unlock()
	err = wait.PollUntilContextTimeout(ctx, time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		list := f.list(nil)
		return len(list.Items) == 2 && list.Items[0].Allocated.Cpu().String() == want["a"] && list.Items[1].Allocated.Cpu().String() == want["b"], nil
	})
	if err != nil {
		t.Fatalf("the list never showed the queues as they ended, %v: %v", want, f.list(nil).Items)
	}
	w.Stop()
	reader.Wait()
	if last["a"] != want["a"] || last["b"] != want["b"] {
		t.Errorf("the watch ended at %v, want %v", last, want)
	}
}
