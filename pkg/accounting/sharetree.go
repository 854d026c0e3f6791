package accounting

import (
	"maps"
	"reflect"
	"slices"

	v1 "k8s.io/api/core/v1"
	quota "k8s.io/apiserver/pkg/quota/v1"

	"github.com/queue-scheduler/queue-scheduler/pkg/fairshare"
	"github.com/queue-scheduler/queue-scheduler/pkg/history"
)

// shareTree is the fair-share tree the shares are computed on, kept from one computation to the
// next while the queues, units, PodGroups and nodes stay as they were: a computation after changes
// of usage only sets the demand of the queues whose usage changed, and the tree gives back the
// lists of the queues whose share did not.
type shareTree struct {
	tree *fairshare.Tree
	// untracked is the shares' untrackedGen the tree was built at.
	untracked uint64
	// usage is each queue's usage its demand was last set from; beyond, what each asks for beyond
	// its pods (queueDemand).
	usage  map[string]QueueUsage
	beyond map[string]v1.ResourceList
	// queues names the queues of the tree.
	queues []string
	// leafDemand is each leaf queue's demand as if not Suspended, unitDemand the sum of beyond: both
	// published with the shares, so replaced when they change, never changed in place.
	leafDemand map[string]v1.ResourceList
	unitDemand v1.ResourceList
}

// newShareTree builds the tree from the queues now, each with its demand given usage; untracked
// is the untrackedGen read before the queues were.
func (a *Accounting) newShareTree(usage map[string]QueueUsage, untracked uint64) *shareTree {
	root, demands, beyond := a.shareTree(usage, nil, nil, nil)
	t := &shareTree{tree: fairshare.NewTree(root), untracked: untracked, usage: usage, beyond: beyond,
		leafDemand: map[string]v1.ResourceList{}}
	var leaves func(q *fairshare.Queue)
	leaves = func(q *fairshare.Queue) {
		if len(q.Children) == 0 {
			t.leafDemand[q.Name] = demands[q.Name]
		}
		for _, c := range q.Children {
			leaves(c)
		}
	}
	leaves(root)
	t.unitDemand = sumBeyond(beyond)
	t.queues = slices.Collect(maps.Keys(demands))
	return t
}

// follow sets the demand of every queue whose usage differs from what its demand was last set from.
func (t *shareTree) follow(a *Accounting, usage map[string]QueueUsage) {
	var moved []string
	for name, u := range usage {
		if last, ok := t.usage[name]; !ok || !sameDemand(last, u) {
			moved = append(moved, name)
		}
	}
	for name := range t.usage {
		if _, ok := usage[name]; !ok {
			moved = append(moved, name)
		}
	}
	t.usage = usage
	if len(moved) == 0 {
		return
	}
	leafDemand, beyond := t.leafDemand, t.beyond
	leafCopied, beyondMoved := false, false
	for _, name := range moved {
		q, ok := a.Store.Queue(name)
		if !ok {
			continue // not a queue of the tree: its pods ask nothing of the shares
		}
		d := a.queueDemand(q, usage[name], nil)
		t.tree.SetDemand(name, d.shared)
		if _, leaf := leafDemand[name]; leaf {
			if !leafCopied {
				leafDemand, leafCopied = maps.Clone(leafDemand), true
			}
			leafDemand[name] = d.open
		}
		if !quota.Equals(beyond[name], d.beyond) {
			if !beyondMoved {
				beyond, beyondMoved = maps.Clone(beyond), true
			}
			if d.beyond == nil {
				delete(beyond, name)
			} else {
				beyond[name] = d.beyond
			}
		}
	}
	t.leafDemand, t.beyond = leafDemand, beyond
	if beyondMoved {
		t.unitDemand = sumBeyond(beyond)
	}
}

// setUsage sets every queue's own usage history.
func (t *shareTree) setUsage(used map[string]history.Usage) {
	for _, name := range t.queues {
		t.tree.SetUsage(name, used[name].ResourceSeconds)
	}
}

// sameDemand says whether two usages of a queue ask for the same of the shares. The usage's lists
// are replaced as pods come and go, never changed in place: the same list is the same amount, and
// most queues at most computations hold the same lists as at the last.
func sameDemand(a, b QueueUsage) bool {
	return sameList(a.Allocated, b.Allocated) && sameList(a.Pending, b.Pending)
}

// sameList says whether a and b list the same amounts: the same map, or equal ones.
func sameList(a, b v1.ResourceList) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer() || quota.Equals(a, b)
}

// sumBeyond is what the queues ask for beyond their pods, together.
func sumBeyond(beyond map[string]v1.ResourceList) v1.ResourceList {
	sum := v1.ResourceList{}
	for _, b := range beyond {
		sum = quota.Add(sum, b)
	}
	return quota.RemoveZeros(sum)
}
