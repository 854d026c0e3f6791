package accounting

import "sync"

// listeners are the functions told of something that happened to a queue: its usage changed, its
// room was freed, its deserved share changed, its work was deleted. They may be registered at any
// time, from then on they are told of every change, and they are called with no lock held.
type listeners[E any] struct {
	mu sync.Mutex
	fs []func(E)
}

func (l *listeners[E]) add(f func(E)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.fs = append(l.fs, f)
}

func (l *listeners[E]) notify(e E) {
	l.mu.Lock()
	fs := l.fs
	l.mu.Unlock()
	for _, f := range fs {
		f(e)
	}
}
