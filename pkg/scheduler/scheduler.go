// Package scheduler assembles the queue-scheduler: the upstream kube-scheduler command with the queue
// plugins registered. The binary and the embedded control plane both build it from here, so what the
// tests run is what ships.
package scheduler

import (
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/plugins/gang"
	"github.com/queue-scheduler/queue-scheduler/plugins/proportion"
	"github.com/queue-scheduler/queue-scheduler/plugins/queuestate"
	"github.com/queue-scheduler/queue-scheduler/plugins/queueunit"
	"github.com/queue-scheduler/queue-scheduler/plugins/reclaim"
)

// Name is the binary's name and the default schedulerName of its profile.
const Name = schedulingv1beta1.SchedulerName

// PluginOptions registers every out-of-tree plugin of queue-scheduler.
func PluginOptions() []app.Option {
	return []app.Option{
		app.WithPlugin(queuestate.Name, queuestate.New),
		app.WithPlugin(queueunit.Name, queueunit.New),
		app.WithPlugin(proportion.Name, proportion.New),
		app.WithPlugin(reclaim.Name, reclaim.New),
		app.WithPlugin(gang.Name, gang.New),
	}
}
