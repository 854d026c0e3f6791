// Package modproxy writes a Go module proxy directory (GOPROXY=file://DIR) that serves modules of
// this repository at a version, from the files of the working tree that git does not ignore: what a
// tag would publish. It lets `go install module@version` and `go mod tidy` be run against modules
// that no public proxy serves yet.
package modproxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// Module is a module of the repository, at the version to serve it as.
type Module struct {
	// Path is the module path, Dir its directory.
	Path, Dir string
	Version   string
}

// Write adds m to the proxy directory: its version list, .info, .mod and .zip.
func Write(proxyDir string, m Module) error {
	escaped, err := module.EscapePath(m.Path)
	if err != nil {
		return err
	}
	dir := filepath.Join(proxyDir, filepath.FromSlash(escaped), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	base := filepath.Join(dir, m.Version)
	goMod, err := os.ReadFile(filepath.Join(m.Dir, "go.mod"))
	if err != nil {
		return err
	}
	info, err := json.Marshal(map[string]any{"Version": m.Version, "Time": time.Now().UTC().Format(time.RFC3339)})
	if err != nil {
		return err
	}
	if err := os.WriteFile(base+".mod", goMod, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(base+".info", info, 0o644); err != nil {
		return err
	}
	if err := writeZip(base+".zip", m); err != nil {
		return fmt.Errorf("zip of %s@%s: %w", m.Path, m.Version, err)
	}
	list, err := os.OpenFile(filepath.Join(dir, "list"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(list, m.Version)
	if closeErr := list.Close(); err == nil {
		err = closeErr
	}
	return err
}

func writeZip(name string, m Module) error {
	files, err := moduleFiles(m.Dir)
	if err != nil {
		return err
	}
	out, err := os.Create(name)
	if err != nil {
		return err
	}
	err = modzip.Create(out, module.Version{Path: m.Path, Version: m.Version}, files)
	if closeErr := out.Close(); err == nil {
		err = closeErr
	}
	return err
}

// moduleFiles lists the files of the module in dir that git tracks or would track, without those of
// modules nested in it.
func moduleFiles(dir string) ([]modzip.File, error) {
	var stderr bytes.Buffer
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir, cmd.Stderr = dir, &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files in %s: %w: %s", dir, err, stderr.String())
	}
	names := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	nested := map[string]bool{}
	for _, name := range names {
		if path.Base(name) == "go.mod" && path.Dir(name) != "." {
			nested[path.Dir(name)] = true
		}
	}
	var files []modzip.File
	for _, name := range names {
		if name == "" || inNested(name, nested) {
			continue
		}
		if _, err := os.Lstat(filepath.Join(dir, name)); os.IsNotExist(err) {
			continue // deleted in the working tree
		}
		files = append(files, file{root: dir, name: name})
	}
	return files, nil
}

func inNested(name string, nested map[string]bool) bool {
	for d := path.Dir(name); d != "."; d = path.Dir(d) {
		if nested[d] {
			return true
		}
	}
	return false
}

// file is a file of the working tree, named by its slash-separated path in the module.
type file struct{ root, name string }

func (f file) Path() string                 { return f.name }
func (f file) Lstat() (os.FileInfo, error)  { return os.Lstat(filepath.Join(f.root, f.name)) }
func (f file) Open() (io.ReadCloser, error) { return os.Open(filepath.Join(f.root, f.name)) }

// Env is the environment of a go command that resolves modules from the proxy directory first, then
// from the module cache's downloads, then from the proxies the go command is configured with (a
// fresh machine's cache lacks what tidy reads of the dependencies' tests). Modules served from the
// working tree are not checked against the checksum database.
func Env(proxyDir string) ([]string, error) {
	out, err := exec.Command("go", "env", "GOMODCACHE", "GOPROXY").Output()
	if err != nil {
		return nil, fmt.Errorf("go env GOMODCACHE GOPROXY: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	cache := filepath.Join(strings.TrimSpace(lines[0]), "cache", "download")
	proxies := "file://" + filepath.ToSlash(proxyDir) + ",file://" + filepath.ToSlash(cache)
	if len(lines) > 1 {
		if configured := strings.TrimSpace(lines[1]); configured != "" && configured != "off" {
			proxies += "," + configured
		}
	}
	return []string{"GOWORK=off", "GOFLAGS=-mod=mod", "GOSUMDB=off", "GOTOOLCHAIN=local", "GOPROXY=" + proxies}, nil
}
