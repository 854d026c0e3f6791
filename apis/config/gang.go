package config

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// GangArgs configures the Gang plugin.
type GangArgs struct {
	// DefaultScheduleTimeoutSeconds bounds how long reserved members of a PodGroup without
	// spec.scheduleTimeoutSeconds wait at Permit for the rest of their gang; 60 when zero.
	DefaultScheduleTimeoutSeconds int32 `json:"defaultScheduleTimeoutSeconds,omitempty"`
}

// DefaultScheduleTimeout is the Gang plugin's wait for a gang when neither the PodGroup nor the
// args say.
const DefaultScheduleTimeout = 60 * time.Second

// DecodeGang reads GangArgs from a plugin's args (nil means all defaults) and validates them.
func DecodeGang(obj runtime.Object) (*GangArgs, error) {
	args := &GangArgs{}
	if err := decodeRaw(obj, args, "Gang"); err != nil {
		return nil, err
	}
	if args.DefaultScheduleTimeoutSeconds == 0 {
		args.DefaultScheduleTimeoutSeconds = int32(DefaultScheduleTimeout / time.Second)
	}
	if args.DefaultScheduleTimeoutSeconds < 0 {
		return nil, fmt.Errorf("%s args: %w", "Gang",
			field.Invalid(field.NewPath("defaultScheduleTimeoutSeconds"), args.DefaultScheduleTimeoutSeconds, "must be at least 1"))
	}
	return args, nil
}

// ScheduleTimeout is the default wait for a gang.
func (a *GangArgs) ScheduleTimeout() time.Duration {
	return time.Duration(a.DefaultScheduleTimeoutSeconds) * time.Second
}
