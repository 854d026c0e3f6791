package accounting

import (
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	quota "k8s.io/apiserver/pkg/quota/v1"
)

// resourceShapes keeps one copy of each distinct resource list, shared by every holder of an equal
// one: pods of one job ask for the same requests, nodes of one pool offer the same allocatable, and a
// copy costs about 1 KB (a map of Quantities). The lists are never written to once shared. Its
// owner guards it (usage.mu for pods' requests, clusterCapacity.mu for nodes').
type resourceShapes map[string]*resourceShape

type resourceShape struct {
	list    v1.ResourceList
	holders int
}

// shapeKey names a resource list: its resources in order with their exact quantities.
func shapeKey(requests v1.ResourceList) string {
	names := make([]string, 0, len(requests))
	for name := range requests {
		names = append(names, string(name))
	}
	slices.Sort(names)
	var b strings.Builder
	for _, name := range names {
		q := requests[v1.ResourceName(name)] // a copy: String caches its text in the Quantity
		b.WriteString(name)
		b.WriteByte('=')
		b.WriteString(q.String())
		b.WriteByte(',')
	}
	return b.String()
}

// acquire returns the shared copy of list, counting one more holder on it. The first holder's list
// is copied, so the caller may keep or drop its own.
func (s resourceShapes) acquire(list v1.ResourceList) v1.ResourceList {
	key := shapeKey(list)
	shape, ok := s[key]
	if !ok {
		shape = &resourceShape{list: list.DeepCopy()}
		s[key] = shape
	}
	shape.holders++
	return shape.list
}

// release counts one holder less on the shared copy of list, and forgets it with its last holder.
func (s resourceShapes) release(list v1.ResourceList) {
	key := shapeKey(list)
	if shape, ok := s[key]; ok {
		if shape.holders--; shape.holders <= 0 {
			delete(s, key)
		}
	}
}

// put stores a pod's entry, its requests shared (see resourceShapes). Callers hold u.mu.
func (u *PodTable) put(uid types.UID, entry podUsage) {
	old, existed := u.pods[uid]
	if existed && quota.Equals(old.requests, entry.requests) {
		entry.requests = old.requests
	} else {
		entry.requests = u.shapes.acquire(entry.requests)
		if existed {
			u.shapes.release(old.requests)
		}
	}
	u.pods[uid] = entry
}

// drop forgets a pod's entry. Callers hold u.mu.
func (u *PodTable) drop(uid types.UID) {
	if old, ok := u.pods[uid]; ok {
		u.shapes.release(old.requests)
		delete(u.pods, uid)
	}
}
