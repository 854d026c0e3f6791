// Package scheduler assembles the queue-scheduler: the upstream kube-scheduler command with the queue
// plugins registered. The binary and the embedded control plane both build it from here, so what the
// tests run is what ships.
package scheduler

import (
	"sort"

	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/plugins/backfill"
	"github.com/queue-scheduler/queue-scheduler/plugins/gang"
	"github.com/queue-scheduler/queue-scheduler/plugins/proportion"
	"github.com/queue-scheduler/queue-scheduler/plugins/queuestate"
	"github.com/queue-scheduler/queue-scheduler/plugins/queueunit"
	"github.com/queue-scheduler/queue-scheduler/plugins/reclaim"
)

// Name is the binary's name and the default schedulerName of its profile.
const Name = schedulingv1beta1.SchedulerName

// Plugins is the registry of every out-of-tree plugin of queue-scheduler, each built on root's
// accounting.
func Plugins(root *Root) frameworkruntime.Registry {
	return frameworkruntime.Registry{
		queuestate.Name: root.factory(queuestate.New),
		queueunit.Name:  root.factory(queueunit.New),
		proportion.Name: root.factory(proportion.New),
		reclaim.Name:    root.gangFactory(reclaim.New),
		gang.Name:       root.gangFactory(gang.New),
		backfill.Name:   root.factory(backfill.New),
	}
}

// PluginOptions registers every out-of-tree plugin of queue-scheduler with the command, on root.
func PluginOptions(root *Root) []app.Option {
	plugins := Plugins(root)
	names := make([]string, 0, len(plugins))
	for name := range plugins {
		names = append(names, name)
	}
	sort.Strings(names)
	opts := make([]app.Option, 0, len(names))
	for _, name := range names {
		opts = append(opts, app.WithPlugin(name, plugins[name]))
	}
	return opts
}
