// Package eventobj reads the objects of scheduler cluster events: typed objects from the
// queue-scheduler informers, unstructured ones from the scheduler's dynamic informers.
package eventobj

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// As reads an event object as T. The result is shared: callers only read it.
func As[T any](obj any) (*T, error) {
	switch o := obj.(type) {
	case *T:
		return o, nil
	case *unstructured.Unstructured:
		if out, ok := recent.lookup(o).(*T); ok {
			return out, nil
		}
		out := new(T)
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.UnstructuredContent(), out); err != nil {
			return nil, fmt.Errorf("convert %s %q: %w", o.GetKind(), o.GetName(), err)
		}
		recent.remember(o, out)
		return out, nil
	default:
		return nil, fmt.Errorf("unexpected object of type %T", obj)
	}
}

// recent remembers the last conversions. The scheduler asks a plugin's QueueingHint about one event
// once for every waiting pod, with the same old and new objects each time: without it each pod paid
// for converting them again (in the gang benchmark, the costliest part of event handling). An entry
// holds its object, so the address cannot be reused for another while it is remembered; informer
// objects are not changed once delivered.
var recent conversions

type conversions struct {
	mu      sync.Mutex
	next    int
	entries [4]struct {
		from *unstructured.Unstructured
		to   any
	}
}

func (c *conversions) lookup(from *unstructured.Unstructured) any {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries {
		if e.from == from {
			return e.to
		}
	}
	return nil
}

func (c *conversions) remember(from *unstructured.Unstructured, to any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries[c.next].from, c.entries[c.next].to = from, to
	c.next = (c.next + 1) % len(c.entries)
}
