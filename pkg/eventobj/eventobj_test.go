package eventobj

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func unstructuredObject(name string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{}
	o.SetAPIVersion("v1")
	o.SetKind("ConfigMap")
	o.SetName(name)
	return o
}

// An event's objects are converted once, however many pods a hint is asked about; another object of
// the same name, or the same object read as another type, is converted afresh.
func TestAsConvertsAnObjectOnce(t *testing.T) {
	old, cur := unstructuredObject("a"), unstructuredObject("a")
	first, err := As[metav1.PartialObjectMetadata](cur)
	if err != nil || first.Name != "a" {
		t.Fatalf("As = %+v, %v", first, err)
	}
	if _, err := As[metav1.PartialObjectMetadata](old); err != nil {
		t.Fatal(err)
	}
	again, _ := As[metav1.PartialObjectMetadata](cur)
	if again != first {
		t.Errorf("the same object converted twice")
	}
	if other, _ := As[metav1.PartialObjectMetadata](old); other == first {
		t.Errorf("another object got the first one's conversion")
	}
	if asList, err := As[metav1.List](cur); err != nil || asList == nil {
		t.Errorf("As another type = %v, %v; want a fresh conversion", asList, err)
	}
}

func TestAsTypedAndUnexpected(t *testing.T) {
	typed := &metav1.PartialObjectMetadata{}
	if got, err := As[metav1.PartialObjectMetadata](typed); got != typed || err != nil {
		t.Errorf("typed object: got %p, %v; want it back", got, err)
	}
	if _, err := As[metav1.PartialObjectMetadata]("text"); err == nil {
		t.Error("a string was read as an object")
	}
}
