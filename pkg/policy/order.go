package policy

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Place is where a piece of work stands in its queue: its priority, the time it entered the queue
// (a gang's, for each of its members), and its namespace and name, which break ties.
type Place struct {
	Priority        int32
	Since           time.Time
	Namespace, Name string
}

// PlaceOf is where a PodGroup or QueueUnit of the given priority stands among the work its queue
// has not admitted yet: PodGroups are admitted and QueueUnits dequeued by Ahead.
func PlaceOf(work metav1.Object, priority int32) Place {
	return Place{Priority: priority, Since: work.GetCreationTimestamp().Time, Namespace: work.GetNamespace(), Name: work.GetName()}
}

// Ahead says whether the work at a is taken before the work at b: higher priority first, then the
// older, then by namespace and name. The scheduler's queue sort, the admission of PodGroups and the
// dequeue of QueueUnits all take work in this order, and the live view numbers it so.
func Ahead(a, b Place) bool {
	switch {
	case a.Priority != b.Priority:
		return a.Priority > b.Priority
	case !a.Since.Equal(b.Since):
		return a.Since.Before(b.Since)
	case a.Namespace != b.Namespace:
		return a.Namespace < b.Namespace
	}
	return a.Name < b.Name
}

// Compare orders a and b as Ahead does, for slices.SortFunc: negative when a is taken first.
func Compare(a, b Place) int {
	switch {
	case Ahead(a, b):
		return -1
	case Ahead(b, a):
		return 1
	}
	return 0
}
