package config

import (
	"cmp"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

func TestDecodeGang(t *testing.T) {
	tests := []struct {
		name, raw string
		want      time.Duration
		wantErr   string
	}{
		{name: "defaults", want: DefaultScheduleTimeout},
		{name: "set", raw: `{"defaultScheduleTimeoutSeconds": 120}`, want: 2 * time.Minute},
		{name: "negative", raw: `{"defaultScheduleTimeoutSeconds": -1}`, wantErr: "Gang args: defaultScheduleTimeoutSeconds: Invalid value: -1: must be at least 1"},
		{name: "negative backoff", raw: `{"podGroupBackoffSeconds": -5}`, wantErr: "Gang args: podGroupBackoffSeconds: Invalid value: -5: must be at least 1"},
		{name: "not JSON", raw: `{`, wantErr: "Gang args:"},
	}
	for _, tt := range tests {
		var obj runtime.Object
		if tt.raw != "" {
			obj = &runtime.Unknown{Raw: []byte(tt.raw)}
		}
		args, err := DecodeGang(obj)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: got error %v, want %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil || args.ScheduleTimeout() != tt.want {
			t.Errorf("%s: got %v, %v; want %s", tt.name, args, err, tt.want)
		}
	}
}

func TestDecodeGangBackoff(t *testing.T) {
	for raw, want := range map[string]time.Duration{"": DefaultPodGroupBackoff, `{"podGroupBackoffSeconds": 300}`: 5 * time.Minute} {
		var obj runtime.Object
		if raw != "" {
			obj = &runtime.Unknown{Raw: []byte(raw)}
		}
		args, err := DecodeGang(obj)
		if err != nil || args.PodGroupBackoff() != want {
			t.Errorf("%q: got %v, %v; want a backoff of %s", raw, args, err, want)
		}
	}
}

func TestDecodeGangSources(t *testing.T) {
	tests := []struct {
		name, raw string
		want      []schedulingv1beta1.GangSource
		wantErr   string
	}{
		{name: "absent takes every source", want: schedulingv1beta1.GangSources},
		{name: "empty takes none", raw: `{"gangSources": []}`, want: []schedulingv1beta1.GangSource{}},
		{name: "one", raw: `{"gangSources": ["volcano"]}`, want: []schedulingv1beta1.GangSource{schedulingv1beta1.GangSourceVolcano}},
		{name: "unknown", raw: `{"gangSources": ["yunikorn"]}`,
			wantErr: `gangSources[0]: Unsupported value: "yunikorn": supported values: "scheduler-plugins", "volcano", "kubernetes"`},
		{name: "twice", raw: `{"gangSources": ["volcano", "volcano"]}`, wantErr: `gangSources[1]: Duplicate value: "volcano"`},
	}
	for _, tt := range tests {
		var obj runtime.Object
		if tt.raw != "" {
			obj = &runtime.Unknown{Raw: []byte(tt.raw)}
		}
		args, err := Decode(obj, "ns")
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: got error %v, want %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(args.GangSources, tt.want) {
			t.Errorf("%s: got %v, %v; want %v", tt.name, args.GangSources, err, tt.want)
		}
		for _, source := range schedulingv1beta1.GangSources {
			if args.TakesGangsOf(source) != slices.Contains(tt.want, source) {
				t.Errorf("%s: TakesGangsOf(%s) = %v", tt.name, source, args.TakesGangsOf(source))
			}
		}
	}
}

// The controller's pacing of status writes and of forecasts: a zero want is the default.
func TestDecodeControllerPacing(t *testing.T) {
	tests := []struct {
		name, raw                                    string
		wantInterval                                 time.Duration
		wantRate                                     int32
		resolution, defaultRuntime, forecastInterval time.Duration
		wantErr                                      string
	}{
		{name: "defaults"},
		{name: "set", raw: `{"controller": {"statusWriteInterval": "2s", "statusWritesPerSecond": 20}}`, wantInterval: 2 * time.Second, wantRate: 20},
		{name: "interval too short", raw: `{"controller": {"statusWriteInterval": "10ms"}}`,
			wantErr: `controller.statusWriteInterval: Invalid value: "10ms": must be at least 100ms`},
		{name: "negative interval", raw: `{"controller": {"statusWriteInterval": "-1s"}}`,
			wantErr: `controller.statusWriteInterval: Invalid value: "-1s": must be at least 100ms`},
		{name: "negative rate", raw: `{"controller": {"statusWritesPerSecond": -5}}`,
			wantErr: `controller.statusWritesPerSecond: Invalid value: -5: must be at least 1`},
		{name: "not a duration", raw: `{"controller": {"statusWriteInterval": "soon"}}`, wantErr: `QueueState args:`},
		{name: "forecasts set", raw: `{"controller": {"forecastResolution": "1s", "forecastDefaultRuntime": "20m", "forecastInterval": "2s"}}`,
			resolution: time.Second, defaultRuntime: 20 * time.Minute, forecastInterval: 2 * time.Second},
		{name: "eager forecasts", raw: `{"controller": {"forecastInterval": "500ms"}}`,
			wantErr: `controller.forecastInterval: Invalid value: "500ms": must be at least 1s`},
		{name: "fine resolution", raw: `{"controller": {"forecastResolution": "10ms"}}`,
			wantErr: `controller.forecastResolution: Invalid value: "10ms": must be at least 100ms`},
		{name: "short default runtime", raw: `{"controller": {"forecastDefaultRuntime": "100ms"}}`,
			wantErr: `controller.forecastDefaultRuntime: Invalid value: "100ms": must be at least 1s`},
	}
	for _, tt := range tests {
		args, done, err := decodeCase(t, tt.name, tt.raw, tt.wantErr)
		if done {
			continue
		}
		want := ControllerArgs{
			LeaseNamespace:         args.Controller.LeaseNamespace,
			StatusWriteInterval:    Duration{cmp.Or(tt.wantInterval, DefaultStatusWriteInterval)},
			StatusWritesPerSecond:  cmp.Or(tt.wantRate, DefaultStatusWritesPerSecond),
			ForecastResolution:     Duration{cmp.Or(tt.resolution, DefaultForecastResolution)},
			ForecastDefaultRuntime: Duration{cmp.Or(tt.defaultRuntime, DefaultForecastRuntime)},
			ForecastInterval:       Duration{cmp.Or(tt.forecastInterval, DefaultForecastInterval)},
		}
		if err != nil || args.Controller != want {
			t.Errorf("%s: got %+v, %v; want %+v", tt.name, args.Controller, err, want)
		}
	}
}

func TestDecodeFairSharing(t *testing.T) {
	tests := []struct {
		name, raw string
		want      FairSharingArgs
		wantErr   string
	}{
		{name: "defaults: usage kept, shares by weight",
			want: FairSharingArgs{UsageHalfLife: &Duration{DefaultUsageHalfLife}, EntryCharge: &Duration{DefaultEntryCharge},
				CheckpointInterval: Duration{DefaultCheckpointInterval}}},
		{name: "set", raw: `{"fairSharing": {"usageHalfLife": "4h", "usageResetPeriod": "168h", "entryCharge": "0s", "usageFactor": 0.5, "checkpointInterval": "1m"}}`,
			want: FairSharingArgs{UsageHalfLife: &Duration{4 * time.Hour}, UsageResetPeriod: Duration{168 * time.Hour}, EntryCharge: &Duration{},
				UsageFactor: 0.5, CheckpointInterval: Duration{time.Minute}}},
		{name: "off", raw: `{"fairSharing": {"usageHalfLife": "0s"}}`,
			want: FairSharingArgs{UsageHalfLife: &Duration{}, EntryCharge: &Duration{DefaultEntryCharge}, CheckpointInterval: Duration{DefaultCheckpointInterval}}},
		{name: "a factor without history", raw: `{"fairSharing": {"usageHalfLife": "0s", "usageFactor": 1}}`,
			wantErr: `fairSharing.usageFactor: Invalid value: 1: must be 0 while usageHalfLife is 0s: no usage is kept`},
		{name: "factor out of range", raw: `{"fairSharing": {"usageFactor": 11}}`,
			wantErr: `fairSharing.usageFactor: Invalid value: 11: must be between 0 and 10`},
		{name: "negative factor", raw: `{"fairSharing": {"usageFactor": -1}}`,
			wantErr: `fairSharing.usageFactor: Invalid value: -1: must be between 0 and 10`},
		{name: "negative half-life", raw: `{"fairSharing": {"usageHalfLife": "-1h"}}`,
			wantErr: `fairSharing.usageHalfLife: Invalid value: "-1h0m0s": must not be negative`},
		{name: "checkpoints too often", raw: `{"fairSharing": {"checkpointInterval": "10ms"}}`,
			wantErr: `fairSharing.checkpointInterval: Invalid value: "10ms": must be at least 1s`},
	}
	for _, tt := range tests {
		args, done, err := decodeCase(t, tt.name, tt.raw, tt.wantErr)
		if done {
			continue
		}
		if err != nil || !reflect.DeepEqual(args.FairSharing, tt.want) {
			t.Errorf("%s: got %+v, %v; want %+v", tt.name, args.FairSharing, err, tt.want)
		}
	}
}

// decodeCase decodes raw ("" for no args); a case that wants an error is checked here and done.
func decodeCase(t *testing.T, name, raw, wantErr string) (args *QueueStateArgs, done bool, err error) {
	t.Helper()
	var obj runtime.Object
	if raw != "" {
		obj = &runtime.Unknown{Raw: []byte(raw)}
	}
	args, err = Decode(obj, "ns")
	if wantErr == "" {
		return args, false, err
	}
	if err == nil || !strings.Contains(err.Error(), wantErr) {
		t.Errorf("%s: got error %v, want %q", name, err, wantErr)
	}
	return nil, true, nil
}
