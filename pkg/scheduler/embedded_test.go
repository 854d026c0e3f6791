package scheduler

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	componentbaseconfig "k8s.io/component-base/config"
	kubeschedulerconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"

	"github.com/queue-scheduler/queue-scheduler/apis/config"
	"github.com/queue-scheduler/queue-scheduler/pkg/controller"
	"github.com/queue-scheduler/queue-scheduler/plugins/queuestate"
)

// The embedded controller and webhook take the QueueState args of the first profile that has some,
// and the defaults when no profile configures QueueState (or none enables it).
func TestQueueStateArgs(t *testing.T) {
	args := func(addr string) runtime.Object {
		return &runtime.Unknown{Raw: []byte(`{"webhook":{"bindAddress":"` + addr + `"}}`), ContentType: runtime.ContentTypeJSON}
	}
	profile := func(name string, pluginArgs runtime.Object) kubeschedulerconfig.KubeSchedulerProfile {
		p := kubeschedulerconfig.KubeSchedulerProfile{SchedulerName: name}
		if pluginArgs != nil {
			p.PluginConfig = []kubeschedulerconfig.PluginConfig{{Name: "Other", Args: args(":1")}, {Name: queuestate.Name, Args: pluginArgs}}
		}
		return p
	}
	tests := []struct {
		name     string
		profiles []kubeschedulerconfig.KubeSchedulerProfile
		want     string
	}{
		{"no profile configures QueueState", []kubeschedulerconfig.KubeSchedulerProfile{profile("plain", nil)}, config.DefaultBindAddress},
		{"the first that does", []kubeschedulerconfig.KubeSchedulerProfile{profile("plain", nil), profile("a", args(":8443")), profile("b", args(":7443"))}, ":8443"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := config.Decode(queueStateArgs(tt.profiles), "ns")
			if err != nil {
				t.Fatal(err)
			}
			if got.Webhook.BindAddress != tt.want {
				t.Errorf("bind address %q, want %q", got.Webhook.BindAddress, tt.want)
			}
		})
	}
}

// The controller's lease is timed as the scheduler's when the scheduler elects a leader, and keeps
// the defaults when it does not (a single replica, the simulator).
func TestControllerLeaseFollowsTheSchedulers(t *testing.T) {
	args := &config.QueueStateArgs{Controller: config.ControllerArgs{LeaseNamespace: "qs"}}
	scheduler := componentbaseconfig.LeaderElectionConfiguration{
		LeaderElect:   true,
		LeaseDuration: metav1.Duration{Duration: 30 * time.Second},
		RenewDeadline: metav1.Duration{Duration: 20 * time.Second},
		RetryPeriod:   metav1.Duration{Duration: 4 * time.Second},
	}
	got := controllerLease(scheduler, args)
	if got.Namespace != "qs" || got.Name != controller.ComponentName ||
		got.LeaseDuration != 30*time.Second || got.RenewDeadline != 20*time.Second || got.RetryPeriod != 4*time.Second {
		t.Errorf("with leader election: %+v, want the scheduler's timing in namespace qs", got)
	}
	scheduler.LeaderElect = false
	if got, want := controllerLease(scheduler, args), controller.DefaultLeaderElection("qs"); got != want {
		t.Errorf("without leader election: %+v, want the defaults %+v", got, want)
	}
}
