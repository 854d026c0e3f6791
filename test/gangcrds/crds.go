// Package gangcrds holds the PodGroup CRDs of scheduler-plugins (scheduling.x-k8s.io) and Volcano
// (scheduling.volcano.sh), generated from their Go modules by make generate, for the tests and
// benchmarks that install them as a cluster running those projects has them.
package gangcrds

import "embed"

// FS holds the CRDs.
//
//go:embed *.yaml
var FS embed.FS

// The CRD files.
const (
	SchedulerPlugins = "scheduling.x-k8s.io_podgroups.yaml"
	Volcano          = "scheduling.volcano.sh_podgroups.yaml"
)
