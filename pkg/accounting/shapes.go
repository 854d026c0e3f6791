package accounting

import (
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	quota "k8s.io/apiserver/pkg/quota/v1"
)

// requestShapes keeps one copy of each distinct set of pod requests, shared by every counted pod
// that asks for it: pods of one job ask for the same, and a copy a pod costs about 1 KB (a map of
// Quantities). The lists are never written to once shared. Guarded by usage.mu.
type requestShapes map[string]*requestShape

type requestShape struct {
	requests v1.ResourceList
	pods     int
}

// shapeKey names a set of requests: its resources in order with their exact quantities.
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

// acquire returns the shared copy of requests, counting one more pod on it.
func (s requestShapes) acquire(requests v1.ResourceList) v1.ResourceList {
	key := shapeKey(requests)
	shape, ok := s[key]
	if !ok {
		shape = &requestShape{requests: requests}
		s[key] = shape
	}
	shape.pods++
	return shape.requests
}

// release counts one pod less on the shared copy of requests, and forgets it with its last pod.
func (s requestShapes) release(requests v1.ResourceList) {
	key := shapeKey(requests)
	if shape, ok := s[key]; ok {
		if shape.pods--; shape.pods <= 0 {
			delete(s, key)
		}
	}
}

// put stores a pod's entry, its requests shared (see requestShapes). Callers hold u.mu.
func (u *usage) put(uid types.UID, entry podUsage) {
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
func (u *usage) drop(uid types.UID) {
	if old, ok := u.pods[uid]; ok {
		u.shapes.release(old.requests)
		delete(u.pods, uid)
	}
}
