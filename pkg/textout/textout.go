// Package textout writes text made of many formatted lines and reports the first error once, at
// the end, so that a printer of tables and reports need not check every line.
package textout

import (
	"fmt"
	"io"
)

// Lines writes formatted text to W and keeps the first error in Err; after an error it writes
// nothing more.
type Lines struct {
	W   io.Writer
	Err error
}

// Printf writes one formatted piece of text.
func (l *Lines) Printf(format string, args ...any) {
	if l.Err == nil {
		_, l.Err = fmt.Fprintf(l.W, format, args...)
	}
}
