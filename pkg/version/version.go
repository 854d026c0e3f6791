// Package version is the project's version, as its binaries report it.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Set at link time by make build and make image (-X .../pkg/version.version=…); a binary built
// otherwise reports its module version (go install …@vX.Y.Z) or its VCS revision.
var (
	version   = ""
	commit    = ""
	buildDate = ""
)

// Info is what a binary says of its build.
type Info struct {
	Version   string
	Commit    string
	BuildDate string
	// Kubernetes is the version of the Kubernetes modules the binary is built with: the scheduling
	// framework and API types it speaks.
	Kubernetes string
	Go         string
	Platform   string
}

// Get returns the binary's build information.
func Get() Info {
	info := Info{Version: version, Commit: commit, BuildDate: buildDate, Go: runtime.Version(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH}
	build, ok := debug.ReadBuildInfo()
	if !ok {
		return info.withDefaults()
	}
	if info.Version == "" && build.Main.Version != "" && build.Main.Version != "(devel)" {
		info.Version = build.Main.Version
	}
	for _, s := range build.Settings {
		if s.Key == "vcs.revision" && info.Commit == "" {
			info.Commit = s.Value
		}
	}
	for _, dep := range build.Deps {
		switch dep.Path {
		case "k8s.io/kubernetes":
			info.Kubernetes = dep.Version
		case "k8s.io/client-go":
			if info.Kubernetes == "" {
				info.Kubernetes = kubernetesOfStaging(dep.Version)
			}
		}
	}
	return info.withDefaults()
}

// kubernetesOfStaging is the Kubernetes release of a staging module's version: client-go v0.37.1
// is Kubernetes v1.37.1.
func kubernetesOfStaging(v string) string {
	if rest, ok := strings.CutPrefix(v, "v0."); ok {
		return "v1." + rest
	}
	return v
}

func (i Info) withDefaults() Info {
	if i.Version == "" {
		i.Version = "v0.0.0-dev"
	}
	return i
}

// String is the one line --version prints: the name is the binary's.
func (i Info) String() string {
	s := i.Version
	if i.Commit != "" {
		s += " (commit " + short(i.Commit)
		if i.BuildDate != "" {
			s += ", built " + i.BuildDate
		}
		s += ")"
	}
	if i.Kubernetes != "" {
		s += fmt.Sprintf(", Kubernetes %s", i.Kubernetes)
	}
	return s + fmt.Sprintf(", %s %s", i.Go, i.Platform)
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}
