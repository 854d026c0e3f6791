package kubectlqueue

import "fmt"

// notFound says a named queue does not exist.
type notFound struct{ name string }

func (e notFound) Error() string { return fmt.Sprintf("queue %q not found", e.name) }

// usageError is a bad flag or argument, found before anything is sent.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usageErrorf(format string, args ...any) error {
	return usageError{fmt.Sprintf(format, args...)}
}
