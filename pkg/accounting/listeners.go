package accounting

import "sync"

// listeners are the functions told the name of a queue something happened to: its usage changed,
// its room was freed, its deserved share changed, its work was deleted. They may be registered at
// any time, from then on they are told of every change, and they are called with no lock held.
type listeners struct {
	mu sync.Mutex
	fs []func(queue string)
}

func (l *listeners) add(f func(queue string)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.fs = append(l.fs, f)
}

func (l *listeners) notify(queue string) {
	l.mu.Lock()
	fs := l.fs
	l.mu.Unlock()
	for _, f := range fs {
		f(queue)
	}
}
