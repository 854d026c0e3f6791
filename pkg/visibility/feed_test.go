package visibility

import (
	"strconv"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
)

// startedFeed is a feed of literal queues a and b (a labelled team=ml) that took them as they are.
func startedFeed() (*feed, *source) {
	src := literal()
	f := newFeed(src)
	f.start()
	return f, src
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
	want := []string{"ADDED a 2", "ADDED b 2", "DELETED a 4"}
	if got := describe(drain(w)); !equal(got, want) {
		t.Errorf("events %v, want %v", got, want)
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
