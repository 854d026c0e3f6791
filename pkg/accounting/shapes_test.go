package accounting

import (
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// TestPodsShareTheirRequests follows pods asking for the same and for other requests through
// updates, assumptions and deletions: pods asking for the same share one copy, each copy counts
// the pods on it, and it goes with its last pod.
func TestPodsShareTheirRequests(t *testing.T) {
	a := newTestAccounting(t, []runtime.Object{util.MakeQueue("root").Obj(), util.MakeQueue("a").Obj()},
		util.MakeNode("n", "10", "10Gi"))
	first, second, third := pod("a", "first", "1", ""), pod("a", "second", "1", "n"), pod("a", "third", "500m", "")
	steps := []struct {
		name  string
		do    func()
		want  map[string]int // pods on each copy, by key
		share []string       // pods that share one copy
	}{
		{"two pods of 1 cpu", func() { a.Pods.upsert(first.DeepCopy()); a.Pods.upsert(second.DeepCopy()) },
			map[string]int{"cpu=1,": 2}, []string{"first", "second"}},
		{"a pod of 500m", func() { a.Pods.upsert(third.DeepCopy()) }, map[string]int{"cpu=1,": 2, "cpu=500m,": 1}, nil},
		{"an update asking the same", func() { a.Pods.upsert(first.DeepCopy()) }, map[string]int{"cpu=1,": 2, "cpu=500m,": 1},
			[]string{"first", "second"}},
		{"assumed and forgotten", func() { a.Pods.Assume(first); a.Pods.Forget(first) }, map[string]int{"cpu=1,": 2, "cpu=500m,": 1},
			[]string{"first", "second"}},
		{"resized to 500m", func() {
			first = pod("a", "first", "500m", "")
			a.Pods.upsert(first.DeepCopy())
		}, map[string]int{"cpu=1,": 1, "cpu=500m,": 2}, []string{"first", "third"}},
		{"deleted", func() { a.Pods.remove(first.DeepCopy()); a.Pods.remove(third.DeepCopy()) }, map[string]int{"cpu=1,": 1}, nil},
		{"deleted again", func() { a.Pods.remove(first.DeepCopy()); a.Pods.remove(second.DeepCopy()) }, map[string]int{}, nil},
	}
	for _, s := range steps {
		s.do()
		a.Pods.mu.RLock()
		got := map[string]int{}
		for key, shape := range a.Pods.shapes {
			got[key] = shape.holders
		}
		var shared []uintptr
		for _, name := range s.share {
			p := a.Pods.pods[map[string]*v1.Pod{"first": first, "second": second, "third": third}[name].UID]
			shared = append(shared, reflect.ValueOf(p.requests).Pointer())
		}
		a.Pods.mu.RUnlock()
		if !reflect.DeepEqual(got, s.want) {
			t.Fatalf("after %s: pods on each copy %v, want %v", s.name, got, s.want)
		}
		for i := 1; i < len(shared); i++ {
			if shared[i] != shared[0] {
				t.Errorf("after %s: %s and %s hold copies of their own", s.name, s.share[0], s.share[i])
			}
		}
	}
	if got := a.Snapshot().Allocated; !got.Cpu().IsZero() {
		t.Errorf("allocated once every pod went: %s, want 0", got.Cpu())
	}
}
