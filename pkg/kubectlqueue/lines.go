package kubectlqueue

import (
	"fmt"
	"io"
)

// lines writes formatted lines and keeps the first error, so that a printer of many lines checks
// once, at the end.
type lines struct {
	w   io.Writer
	err error
}

func (l *lines) printf(format string, args ...any) {
	if l.err == nil {
		_, l.err = fmt.Fprintf(l.w, format, args...)
	}
}
