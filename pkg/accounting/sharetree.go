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
// of usage only sets the demand of the queues whose usage changed, the tree splits again only
// where they reach, and gives back the lists of the queues whose share did not move.
type shareTree struct {
	tree *fairshare.Tree
	// untracked is the shares' untrackedGen the tree was built at, specs the version of the queues'
	// specs (queueSpecsVersion) read before it was.
	untracked uint64
	specs     int64
	// beyond is what each queue asks for beyond its pods (queueDemand).
	beyond map[string]v1.ResourceList
	// queues names the queues of the tree.
	queues []string
	// leafDemand is each leaf queue's demand as if not Suspended, unitDemand the sum of beyond: both
	// published with the shares, so replaced when they change, never changed in place.
	leafDemand map[string]v1.ResourceList
	unitDemand v1.ResourceList
}

// newShareTree builds the tree from the queues now, each with its demand given usage; untracked
// is the untrackedGen read before the queues were, specs their version.
func (a *Accounting) newShareTree(usage map[string]QueueUsage, untracked uint64, specs int64) *shareTree {
	root, demands, beyond := a.shareTree(usage, nil, nil, nil)
	t := &shareTree{tree: fairshare.NewTree(root), untracked: untracked, specs: specs, beyond: beyond,
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

// follow sets the demand of every queue of moved, whose usage changed, and names the leaves whose
// demand as if not Suspended (leafDemand) it changed.
func (t *shareTree) follow(a *Accounting, moved map[string]QueueUsage) (leaves []string) {
	if len(moved) == 0 {
		return nil
	}
	leafDemand, beyond := t.leafDemand, t.beyond
	leafCopied, beyondMoved := false, false
	for name, usage := range moved {
		q, ok := a.Store.Queue(name)
		if !ok {
			continue // not a queue of the tree: its pods ask nothing of the shares
		}
		d := a.queueDemand(q, usage, nil)
		t.tree.SetDemand(name, d.shared)
		if last, leaf := leafDemand[name]; leaf && !sameList(last, d.open) {
			if !leafCopied {
				leafDemand, leafCopied = maps.Clone(leafDemand), true
			}
			leafDemand[name] = d.open
			leaves = append(leaves, name)
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
	return leaves
}

// setUsage sets every queue's own usage history.
func (t *shareTree) setUsage(used map[string]history.Usage) {
	for _, name := range t.queues {
		t.tree.SetUsage(name, used[name].ResourceSeconds)
	}
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
