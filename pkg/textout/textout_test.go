package textout

import (
	"errors"
	"strings"
	"testing"
)

// failAfter accepts n writes, then fails.
type failAfter struct {
	n   int
	got strings.Builder
}

func (f *failAfter) Write(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errors.New("disk full")
	}
	f.n--
	return f.got.Write(p)
}

func TestLinesKeepTheFirstError(t *testing.T) {
	w := &failAfter{n: 1}
	l := &Lines{W: w}
	l.Printf("a=%d\n", 1)
	l.Printf("b=%d\n", 2)
	w.n = 5 // the writer recovers, but what follows an error is not written
	l.Printf("c=%d\n", 3)
	if l.Err == nil || l.Err.Error() != "disk full" || w.got.String() != "a=1\n" {
		t.Errorf("err %v, written %q; want the first error and only the line before it", l.Err, w.got.String())
	}
}
