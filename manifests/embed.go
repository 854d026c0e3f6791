// Package manifests carries the deployable manifests of queue-scheduler, and embeds the ones that the
// binaries and the embedded control plane install themselves.
package manifests

import "embed"

// CRDs holds the generated CustomResourceDefinitions, one file per kind.
//
//go:embed crds/*.yaml
var CRDs embed.FS

// SchedulerConfig is the sample KubeSchedulerConfiguration with the queue-scheduler profile.
//
//go:embed scheduler-config.yaml
var SchedulerConfig []byte

// Roles are the ClusterRoles shipped for the people who use queue-scheduler (docs/tenancy.md).
//
//go:embed deploy/roles.yaml
var Roles []byte
