// Package config holds the arguments of the queue-scheduler plugins, as written under pluginConfig in
// a KubeSchedulerConfiguration profile. kube-scheduler hands out-of-tree plugins their args as raw
// JSON; Decode reads, defaults and validates them.
package config

import (
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

// QueueStateArgs configures the QueueState plugin and the components it starts once per process:
// the embedded controller and the admission webhook server.
type QueueStateArgs struct {
	// Controller configures the embedded controller.
	Controller ControllerArgs `json:"controller,omitempty"`
	// Webhook configures the admission webhook server; Disabled turns it off.
	Webhook WebhookArgs `json:"webhook,omitempty"`
	// Visibility configures the live view's server (the aggregated API
	// visibility.queue-scheduler.io); Disabled turns it off. It serves the webhook's certificate:
	// with the webhook disabled, it is off too.
	Visibility VisibilityArgs `json:"visibility,omitempty"`
	// GangSources lists the other APIs whose PodGroups queue-scheduler schedules as gangs:
	// "scheduler-plugins", "volcano" and "kubernetes" (the native Workload API). Each is taken only
	// while the API server serves it. All of them when absent; [] takes queue-scheduler's own
	// PodGroups only. Leave out a source whose own scheduler still runs on the cluster (Volcano's, or
	// a coscheduling profile): one writer per PodGroup status.
	GangSources []schedulingv1beta1.GangSource `json:"gangSources,omitempty"`
	// FairSharing configures what the fair shares remember of each queue's usage.
	FairSharing FairSharingArgs `json:"fairSharing,omitempty"`
}

// FairSharingArgs configure the usage history of the fair shares (docs/fairness.md): each queue's
// decayed usage, and how strongly it moves the division of what is left above the guarantees.
type FairSharingArgs struct {
	// UsageHalfLife is the time after which a resource-second used counts half;
	// DefaultUsageHalfLife when absent, and "0s" keeps no usage at all (usageFactor must then be 0).
	UsageHalfLife *Duration `json:"usageHalfLife,omitempty"`
	// UsageResetPeriod, when set, forgets all usage at each multiple of it counted from midnight UTC
	// of Monday 1 January of year 1: "24h" every midnight UTC, "168h" every Monday at midnight UTC.
	UsageResetPeriod Duration `json:"usageResetPeriod,omitempty"`
	// EntryCharge is how long a pod's requests count as used the moment it starts holding them, so
	// that a burst of admissions weighs at once; DefaultEntryCharge when absent, "0s" for none.
	EntryCharge *Duration `json:"entryCharge,omitempty"`
	// UsageFactor is how strongly usage moves the shares above the guarantees, from 0 (not at all:
	// the split by weight) to 10; 1 moves them as much as the weights themselves. 0 when absent.
	UsageFactor float64 `json:"usageFactor,omitempty"`
	// CheckpointInterval is how often the controller writes each queue's usage into its status, from
	// which a new leader or a restarted scheduler resumes it; DefaultCheckpointInterval when zero.
	CheckpointInterval Duration `json:"checkpointInterval,omitempty"`
}

// TakesGangsOf says whether PodGroups of source are gangs of queue-scheduler.
func (a *QueueStateArgs) TakesGangsOf(source schedulingv1beta1.GangSource) bool {
	return slices.Contains(a.GangSources, source)
}

// ControllerArgs configures the embedded controller.
type ControllerArgs struct {
	// LeaseNamespace holds the controller's Lease; $POD_NAMESPACE, else kube-system, when empty.
	LeaseNamespace string `json:"leaseNamespace,omitempty"`
	// StatusWriteInterval is the least time between two writes of one queue's status that its
	// pods' usage (bindings, finished pods) or its PodGroups and QueueUnits (their counts) cause; a
	// change of state is written at once. The first
	// change after a quiet interval is written at once, the changes that follow within the interval
	// together at its end, so a binding shows in its queue's status within about this long.
	// DefaultStatusWriteInterval when zero.
	StatusWriteInterval Duration `json:"statusWriteInterval,omitempty"`
	// StatusWritesPerSecond bounds the usage-driven status writes of all queues together: when more
	// queues are busy than StatusWriteInterval allows at this rate, each is written less often.
	// DefaultStatusWritesPerSecond when zero.
	StatusWritesPerSecond int32 `json:"statusWritesPerSecond,omitempty"`
	// ForecastResolution is the step the forecast of expected starts (the live view's, the
	// ExpectedStart conditions', what-if's) rounds the running pods' ends up to, the fair shares
	// computed once per step: finer is more exact and costs more. DefaultForecastResolution when
	// zero; at least 100ms.
	ForecastResolution Duration `json:"forecastResolution,omitempty"`
	// ForecastDefaultRuntime is the median runtime the forecast gives work of a queue and kind with
	// too little finished work to learn from; its 90th percentile is four times as long.
	// DefaultForecastRuntime when zero; at least 1s.
	ForecastDefaultRuntime Duration `json:"forecastDefaultRuntime,omitempty"`
	// ForecastInterval is the least time between two forecasts of the live view: it serves the last
	// one until it is that old. DefaultForecastInterval when zero; at least 1s.
	ForecastInterval Duration `json:"forecastInterval,omitempty"`
}

// WebhookArgs configures the admission webhook server, which manages its own certificates.
type WebhookArgs struct {
	// Disabled turns the webhook server off.
	Disabled bool `json:"disabled,omitempty"`
	// BindAddress is host:port to serve on; ":9443" when empty.
	BindAddress string `json:"bindAddress,omitempty"`
	// CertSecretNamespace and CertSecretName name the Secret that holds the CA and serving
	// certificate shared by all replicas; the lease namespace and "queue-scheduler-webhook-certs"
	// when empty.
	CertSecretNamespace string `json:"certSecretNamespace,omitempty"`
	CertSecretName      string `json:"certSecretName,omitempty"`
	// DNSNames and IPAddresses go into the serving certificate; the Service's DNS names
	// (queue-scheduler-webhook.<namespace>.svc) when both are empty.
	DNSNames    []string `json:"dnsNames,omitempty"`
	IPAddresses []string `json:"ipAddresses,omitempty"`
	// ConfigurationName is the ValidatingWebhookConfiguration whose caBundle the server keeps
	// current; "queue-scheduler" when empty.
	ConfigurationName string `json:"configurationName,omitempty"`
	// CertDir, when set, holds tls.crt and tls.key issued by someone else (a cert-manager
	// Certificate's Secret mounted into the pod, say). The server then serves those, reloading them
	// at each check, and leaves the certificate Secret and the caBundle to their owner (cert-manager's
	// CA injector).
	CertDir string `json:"certDir,omitempty"`
	// CertCheckInterval is how often the certificate is checked for renewal; one hour when zero.
	CertCheckInterval Duration `json:"certCheckInterval,omitempty"`
}

// VisibilityArgs configures the server of the live view.
type VisibilityArgs struct {
	// Disabled turns the live view's server off.
	Disabled bool `json:"disabled,omitempty"`
	// BindAddress is host:port to serve on; ":8443" when empty.
	BindAddress string `json:"bindAddress,omitempty"`
}

// Serves says whether the live view is served: it is on, and has the webhook's certificate.
func (a *QueueStateArgs) Serves() bool { return !a.Visibility.Disabled && !a.Webhook.Disabled }

// Duration is a time.Duration written as "1h", "30s".
type Duration struct{ time.Duration }

// UnmarshalJSON reads a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	d.Duration = v
	return err
}

// MarshalJSON writes a duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// Defaults of the arguments.
const (
	DefaultBindAddress       = ":9443"
	DefaultCertSecretName    = "queue-scheduler-webhook-certs"
	DefaultConfigurationName = "queue-scheduler"
	DefaultServiceName       = "queue-scheduler-webhook"
	// DefaultVisibilityBindAddress and DefaultVisibilityServiceName are the live view's address and
	// the Service its APIService names.
	DefaultVisibilityBindAddress = ":8443"
	DefaultVisibilityServiceName = "queue-scheduler-visibility"
	// VisibilityAPIService is the APIService of the live view, whose caBundle the webhook server
	// keeps current with its own.
	VisibilityAPIService     = "v1beta1.visibility.queue-scheduler.io"
	DefaultCertCheckInterval = time.Hour
	// DefaultStatusWriteInterval and DefaultStatusWritesPerSecond pace the usage-driven status writes
	// at what controllers and GitOps tools need; the live view carries what changes faster
	// (docs/visibility.md, docs/performance.md "Queue status freshness").
	DefaultStatusWriteInterval   = 5 * time.Second
	DefaultStatusWritesPerSecond = 5
	// DefaultForecastResolution is the forecast's step: fine beside runtimes of minutes and more.
	DefaultForecastResolution = 10 * time.Second
	// DefaultForecastRuntime is the runtime of work nothing is known of: an hour at the median.
	DefaultForecastRuntime = time.Hour
	// DefaultForecastInterval is the least time between two forecasts of the live view.
	DefaultForecastInterval = 10 * time.Second
	// DefaultUsageHalfLife, DefaultEntryCharge and DefaultCheckpointInterval are the usage history's:
	// yesterday's usage counts half, an admission a minute at once, and a restart loses at most five
	// minutes of it. MaxUsageFactor bounds its strength.
	DefaultUsageHalfLife      = 24 * time.Hour
	DefaultEntryCharge        = time.Minute
	DefaultCheckpointInterval = 5 * time.Minute
	MaxUsageFactor            = 10
)

// Decode reads QueueStateArgs from a plugin's args (nil means all defaults), fills in defaults for
// the lease namespace given, and validates them.
func Decode(obj runtime.Object, leaseNamespace string) (*QueueStateArgs, error) {
	args := &QueueStateArgs{}
	if err := decodeRaw(obj, args, "QueueState"); err != nil {
		return nil, err
	}
	args.setDefaults(leaseNamespace)
	if errs := args.validate(); len(errs) > 0 {
		return nil, fmt.Errorf("QueueState args: %w", errs.ToAggregate())
	}
	return args, nil
}

func (a *QueueStateArgs) setDefaults(leaseNamespace string) {
	if a.Controller.LeaseNamespace == "" {
		a.Controller.LeaseNamespace = leaseNamespace
	}
	if a.Controller.StatusWriteInterval.Duration == 0 {
		a.Controller.StatusWriteInterval.Duration = DefaultStatusWriteInterval
	}
	if a.Controller.StatusWritesPerSecond == 0 {
		a.Controller.StatusWritesPerSecond = DefaultStatusWritesPerSecond
	}
	if a.Controller.ForecastResolution.Duration == 0 {
		a.Controller.ForecastResolution.Duration = DefaultForecastResolution
	}
	if a.Controller.ForecastDefaultRuntime.Duration == 0 {
		a.Controller.ForecastDefaultRuntime.Duration = DefaultForecastRuntime
	}
	if a.Controller.ForecastInterval.Duration == 0 {
		a.Controller.ForecastInterval.Duration = DefaultForecastInterval
	}
	if a.GangSources == nil {
		a.GangSources = slices.Clone(schedulingv1beta1.GangSources)
	}
	a.FairSharing.setDefaults()
	w := &a.Webhook
	if w.BindAddress == "" {
		w.BindAddress = DefaultBindAddress
	}
	if w.CertSecretNamespace == "" {
		w.CertSecretNamespace = a.Controller.LeaseNamespace
	}
	if w.CertSecretName == "" {
		w.CertSecretName = DefaultCertSecretName
	}
	if len(w.DNSNames) == 0 && len(w.IPAddresses) == 0 {
		w.DNSNames = append(ServiceDNSNames(DefaultServiceName, w.CertSecretNamespace),
			ServiceDNSNames(DefaultVisibilityServiceName, w.CertSecretNamespace)...)
	}
	if w.ConfigurationName == "" {
		w.ConfigurationName = DefaultConfigurationName
	}
	if w.CertCheckInterval.Duration == 0 {
		w.CertCheckInterval.Duration = DefaultCertCheckInterval
	}
	if a.Visibility.BindAddress == "" {
		a.Visibility.BindAddress = DefaultVisibilityBindAddress
	}
}

func (f *FairSharingArgs) setDefaults() {
	if f.UsageHalfLife == nil {
		f.UsageHalfLife = &Duration{DefaultUsageHalfLife}
	}
	if f.EntryCharge == nil {
		f.EntryCharge = &Duration{DefaultEntryCharge}
	}
	if f.CheckpointInterval.Duration == 0 {
		f.CheckpointInterval.Duration = DefaultCheckpointInterval
	}
}

func (f *FairSharingArgs) validate() field.ErrorList {
	var errs field.ErrorList
	path := field.NewPath("fairSharing")
	nonNegative := func(name string, d Duration) {
		if d.Duration < 0 {
			errs = append(errs, field.Invalid(path.Child(name), d.String(), "must not be negative"))
		}
	}
	nonNegative("usageHalfLife", *f.UsageHalfLife)
	nonNegative("usageResetPeriod", f.UsageResetPeriod)
	nonNegative("entryCharge", *f.EntryCharge)
	switch {
	case !(f.UsageFactor >= 0 && f.UsageFactor <= MaxUsageFactor):
		errs = append(errs, field.Invalid(path.Child("usageFactor"), f.UsageFactor, fmt.Sprintf("must be between 0 and %d", MaxUsageFactor)))
	case f.UsageFactor > 0 && f.UsageHalfLife.Duration == 0:
		errs = append(errs, field.Invalid(path.Child("usageFactor"), f.UsageFactor, "must be 0 while usageHalfLife is 0s: no usage is kept"))
	}
	if f.CheckpointInterval.Duration < time.Second {
		errs = append(errs, field.Invalid(path.Child("checkpointInterval"), f.CheckpointInterval.String(), "must be at least 1s"))
	}
	return errs
}

// ServiceDNSNames are the names a Service in namespace is reached by; <service>.<namespace>.svc is
// the one the API server verifies a webhook's or an APIService's server against.
func ServiceDNSNames(service, namespace string) []string {
	svc := service + "." + namespace
	return []string{service, svc, svc + ".svc", svc + ".svc.cluster.local"}
}

func (a *QueueStateArgs) validate() field.ErrorList {
	var errs field.ErrorList
	path := field.NewPath("webhook")
	if _, _, err := net.SplitHostPort(a.Webhook.BindAddress); err != nil {
		errs = append(errs, field.Invalid(path.Child("bindAddress"), a.Webhook.BindAddress, "must be host:port"))
	}
	if _, _, err := net.SplitHostPort(a.Visibility.BindAddress); err != nil {
		errs = append(errs, field.Invalid(field.NewPath("visibility", "bindAddress"), a.Visibility.BindAddress, "must be host:port"))
	}
	for i, ip := range a.Webhook.IPAddresses {
		if net.ParseIP(ip) == nil {
			errs = append(errs, field.Invalid(path.Child("ipAddresses").Index(i), ip, "must be an IP address"))
		}
	}
	seen := map[schedulingv1beta1.GangSource]bool{}
	for i, source := range a.GangSources {
		switch {
		case !slices.Contains(schedulingv1beta1.GangSources, source):
			errs = append(errs, field.NotSupported(field.NewPath("gangSources").Index(i), source, schedulingv1beta1.GangSources))
		case seen[source]:
			errs = append(errs, field.Duplicate(field.NewPath("gangSources").Index(i), source))
		}
		seen[source] = true
	}
	controller := field.NewPath("controller")
	if a.Controller.StatusWriteInterval.Duration < 100*time.Millisecond {
		errs = append(errs, field.Invalid(controller.Child("statusWriteInterval"), a.Controller.StatusWriteInterval.String(), "must be at least 100ms"))
	}
	if a.Controller.ForecastResolution.Duration < 100*time.Millisecond {
		errs = append(errs, field.Invalid(controller.Child("forecastResolution"), a.Controller.ForecastResolution.String(), "must be at least 100ms"))
	}
	if a.Controller.ForecastDefaultRuntime.Duration < time.Second {
		errs = append(errs, field.Invalid(controller.Child("forecastDefaultRuntime"), a.Controller.ForecastDefaultRuntime.String(), "must be at least 1s"))
	}
	if a.Controller.ForecastInterval.Duration < time.Second {
		errs = append(errs, field.Invalid(controller.Child("forecastInterval"), a.Controller.ForecastInterval.String(), "must be at least 1s"))
	}
	if a.Controller.StatusWritesPerSecond < 1 {
		errs = append(errs, field.Invalid(controller.Child("statusWritesPerSecond"), a.Controller.StatusWritesPerSecond, "must be at least 1"))
	}
	if a.Webhook.CertCheckInterval.Duration < time.Second {
		errs = append(errs, field.Invalid(path.Child("certCheckInterval"), a.Webhook.CertCheckInterval.String(), "must be at least 1s"))
	}
	return append(errs, a.FairSharing.validate()...)
}

// decodeRaw reads a plugin's raw JSON args into args; nil args leave it unchanged.
func decodeRaw(obj runtime.Object, args any, plugin string) error {
	if unknown, ok := obj.(*runtime.Unknown); ok && len(unknown.Raw) > 0 {
		if err := json.Unmarshal(unknown.Raw, args); err != nil {
			return fmt.Errorf("%s args: %w", plugin, err)
		}
	} else if obj != nil && !ok {
		return fmt.Errorf("%s args: want raw JSON, got %T", plugin, obj)
	}
	return nil
}
