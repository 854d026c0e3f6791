package localcluster

import (
	"fmt"
	"os"
	"sync"

	"k8s.io/klog/v2"
)

// processTB lets the upstream in-process kube-apiserver, which expects a test's TB, run inside an
// ordinary process (queuesim, a TestMain, a benchmark). Failures panic with an error that Start turns
// back into an error; cleanups run when the cluster stops.
type processTB struct {
	name string

	mu       sync.Mutex
	cleanups []func()
	failed   bool
	tempDirs []string
}

// fatalError is what Fatal panics with, so that Start can tell it from other panics.
type fatalError struct{ msg string }

func (e fatalError) Error() string { return e.msg }

func newProcessTB(name string) *processTB { return &processTB{name: name} }

func (t *processTB) Attr(string, string) {}
func (t *processTB) Chdir(dir string) {
	if err := os.Chdir(dir); err != nil {
		t.Fatalf("chdir %s: %v", dir, err)
	}
}

func (t *processTB) Cleanup(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cleanups = append(t.cleanups, f)
}

func (t *processTB) Error(args ...any) {
	t.Log(args...)
	t.Fail()
}

func (t *processTB) Errorf(format string, args ...any) {
	t.Logf(format, args...)
	t.Fail()
}

func (t *processTB) Fail() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.failed = true
}

func (t *processTB) FailNow()                          { t.Fatal("FailNow called") }
func (t *processTB) Failed() bool                      { t.mu.Lock(); defer t.mu.Unlock(); return t.failed }
func (t *processTB) Fatal(args ...any)                 { t.Fail(); panic(fatalError{fmt.Sprint(args...)}) }
func (t *processTB) Fatalf(format string, args ...any) { t.Fatal(fmt.Sprintf(format, args...)) }
func (t *processTB) Helper()                           {}
func (t *processTB) Log(args ...any)                   { klog.V(4).Info(fmt.Sprint(args...), "component", t.name) }
func (t *processTB) Logf(format string, args ...any)   { t.Log(fmt.Sprintf(format, args...)) }
func (t *processTB) Name() string                      { return t.name }
func (t *processTB) Setenv(key, value string) {
	if err := os.Setenv(key, value); err != nil {
		t.Fatalf("setenv %s: %v", key, err)
	}
}
func (t *processTB) Skip(args ...any)                 { t.Fatal(append([]any{"skip: "}, args...)...) }
func (t *processTB) Skipf(format string, args ...any) { t.Fatalf("skip: "+format, args...) }
func (t *processTB) SkipNow()                         { t.Fatal("skip") }
func (t *processTB) Skipped() bool                    { return false }

func (t *processTB) TempDir() string {
	dir, err := os.MkdirTemp("", t.name)
	if err != nil {
		t.Fatalf("temp dir: %v", err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.tempDirs = append(t.tempDirs, dir)
	return dir
}

// runCleanups runs the registered cleanups, last first, then removes the temporary directories.
func (t *processTB) runCleanups() {
	t.mu.Lock()
	cleanups, dirs := t.cleanups, t.tempDirs
	t.cleanups, t.tempDirs = nil, nil
	t.mu.Unlock()
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
	for _, d := range dirs {
		_ = os.RemoveAll(d)
	}
}
