package podindex

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func pod(name string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
}

func TestIndex(t *testing.T) {
	x := New()
	x.Add(pod("a"), "q1")
	x.Add(pod("b"), "q1")
	x.Add(pod("a"), "q2") // a now waits for q2 only
	if diff := cmp.Diff([]types.NamespacedName{{Namespace: "ns", Name: "b"}}, x.Names("q1")); diff != "" {
		t.Errorf("q1 (-want,+got):\n%s", diff)
	}
	if got := x.Pods("q2"); len(got) != 1 || got["ns/a"] == nil {
		t.Errorf("q2: got %v, want ns/a", got)
	}
	x.Remove(pod("b"))
	x.Remove(pod("never-added"))
	if got := x.Names("q1"); len(got) != 0 {
		t.Errorf("q1 after removing b: got %v", got)
	}
	if len(x.byKey) != 1 || len(x.byPod) != 1 {
		t.Errorf("empty keys kept: %v", x.byKey)
	}
}
