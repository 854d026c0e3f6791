// Package eventobj reads the objects of scheduler cluster events: typed objects from the
// queue-scheduler informers, unstructured ones from the scheduler's dynamic informers.
package eventobj

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// As reads an event object as T.
func As[T any](obj any) (*T, error) {
	switch o := obj.(type) {
	case *T:
		return o, nil
	case *unstructured.Unstructured:
		out := new(T)
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.UnstructuredContent(), out); err != nil {
			return nil, fmt.Errorf("convert %s %q: %w", o.GetKind(), o.GetName(), err)
		}
		return out, nil
	default:
		return nil, fmt.Errorf("unexpected object of type %T", obj)
	}
}
