package config

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
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
