// Package textout writes text made of many formatted lines and reports the first error once, at
// the end, so that a printer of tables and reports need not check every line.
package textout

import (
	"fmt"
	"io"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
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

// Resources prints a resource list as Kubernetes prints quantities, sorted by name:
// "cpu=8,memory=16Gi"; "<none>" when empty.
func Resources(list v1.ResourceList) string {
	if len(list) == 0 {
		return "<none>"
	}
	names := make([]string, 0, len(list))
	for name := range list {
		names = append(names, string(name))
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, name := range names {
		q := list[v1.ResourceName(name)]
		parts = append(parts, name+"="+q.String())
	}
	return strings.Join(parts, ",")
}
