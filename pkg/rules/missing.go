package rules

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

// maxAccepting bounds how many queues a refusal for a missing queue lists.
const maxAccepting = 8

// queueNotFound refuses work that names a queue that does not exist, and says where it could go
// instead: the queues that would take work from namespace, its team's first, and the closest name
// among them. Only those are named: a tenant learns no queue it could not submit to.
func queueNotFound(path *field.Path, queue, namespace string, view View) *field.Error {
	accepting := acceptingQueues(namespace, view)
	detail := "no queue of that name exists"
	if closest := closestName(queue, accepting); closest != "" {
		detail += fmt.Sprintf("; did you mean %q?", closest)
	}
	switch {
	case len(accepting) == 0:
		detail += fmt.Sprintf("; no queue takes work from namespace %q", namespace)
	case len(accepting) > maxAccepting:
		detail += fmt.Sprintf("; queues that take work from namespace %q: %s and %d more", namespace,
			strings.Join(accepting[:maxAccepting], ", "), len(accepting)-maxAccepting)
	default:
		detail += fmt.Sprintf("; queues that take work from namespace %q: %s", namespace, strings.Join(accepting, ", "))
	}
	return &field.Error{Type: field.ErrorTypeNotFound, Field: path.String(), BadValue: queue, Detail: detail}
}

// acceptingQueues names the queues that take work from namespace now: those that select it by its
// labels (its team's) by name, then those open to every namespace by name.
func acceptingQueues(namespace string, view View) []string {
	names := view.QueueNames()
	slices.Sort(names)
	var selecting, open []string
	for _, name := range names {
		q, ok := view.Queue(name)
		switch {
		case !ok || !takesWorkFrom(q, namespace, view):
		case selectsEvery(q.Spec.NamespaceSelector):
			open = append(open, name)
		default:
			selecting = append(selecting, name)
		}
	}
	return append(selecting, open...)
}

// takesWorkFrom says whether q is a leaf that would take new work from namespace now.
func takesWorkFrom(q *schedulingv1beta1.Queue, namespace string, view View) bool {
	return q.Name != schedulingv1beta1.RootQueue && q.Spec.State != schedulingv1beta1.QueueStateClosed &&
		TreeFaultOf(q, view).Reason == "" && len(view.Children(q.Name)) == 0 && view.NamespaceRefusal(q, namespace) == ""
}

// closestName is the name among names nearest to name by edit distance, the first of equals, when
// it is near enough to be a slip (at most a third of its length, at least one edit), or "".
func closestName(name string, names []string) string {
	best, bestDistance := "", max(1, len(name)/3)+1
	for _, n := range names {
		if d := editDistance(name, n); d < bestDistance {
			best, bestDistance = n, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// selectsEvery says whether a namespace selector selects every namespace ({}).
func selectsEvery(sel *metav1.LabelSelector) bool {
	return sel != nil && len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0
}
