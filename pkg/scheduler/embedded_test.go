package scheduler

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	kubeschedulerconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"

	"github.com/queue-scheduler/queue-scheduler/apis/config"
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
