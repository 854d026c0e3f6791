package config

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
)

func TestDecodeBackfill(t *testing.T) {
	five, none := int32(DefaultMaxReservations), int32(0)
	defaults := BackfillArgs{MaxReservations: &five, Window: Duration{DefaultReservationWindow},
		Resolution: Duration{DefaultReservationResolution}, ReplanInterval: Duration{DefaultReplanInterval}, LapseAfter: Duration{DefaultLapseAfter}}
	tests := []struct {
		name, raw string
		want      BackfillArgs
		wantErr   string
	}{
		{name: "defaults", want: defaults},
		{name: "set", raw: `{"maxReservations": 0, "window": "2h", "resolution": "30s", "replanInterval": "5s", "lapseAfter": "10m"}`,
			want: BackfillArgs{MaxReservations: &none, Window: Duration{2 * time.Hour}, Resolution: Duration{30 * time.Second},
				ReplanInterval: Duration{5 * time.Second}, LapseAfter: Duration{10 * time.Minute}}},
		{name: "lapse before a replan", raw: `{"replanInterval": "5s", "lapseAfter": "1s"}`, wantErr: `lapseAfter: Invalid value: "1s": must be at least the replan interval (5s)`},
		{name: "negative count", raw: `{"maxReservations": -1}`, wantErr: "Backfill args: maxReservations: Invalid value: -1: must not be negative"},
		{name: "fine resolution", raw: `{"resolution": "10ms"}`, wantErr: `Backfill args: resolution: Invalid value: "10ms": must be at least 100ms`},
		{name: "eager replans", raw: `{"replanInterval": "1ms"}`, wantErr: `replanInterval: Invalid value: "1ms": must be at least 100ms`},
		{name: "window below the resolution", raw: `{"window": "5s", "resolution": "1m"}`, wantErr: `window: Invalid value: "5s": must be at least the resolution (1m0s)`},
		{name: "negative window", raw: `{"window": "-1h"}`, wantErr: `window: Invalid value: "-1h0m0s"`},
		{name: "not JSON", raw: `{`, wantErr: "Backfill args:"},
	}
	for _, tt := range tests {
		var obj runtime.Object
		if tt.raw != "" {
			obj = &runtime.Unknown{Raw: []byte(tt.raw)}
		}
		args, err := DecodeBackfill(obj)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: got error %v, want %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(*args, tt.want) {
			t.Errorf("%s: got %+v, %v; want %+v", tt.name, args, err, tt.want)
		}
	}
}
