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
	// PodGroupBackoffSeconds bounds how long a gang rejected for want of room waits before it is
	// tried again when no room is freed and no queue's spec changes in the meantime; 10 when zero.
	PodGroupBackoffSeconds int32 `json:"podGroupBackoffSeconds,omitempty"`
}

// DefaultScheduleTimeout is the Gang plugin's wait for a gang when neither the PodGroup nor the
// args say.
const DefaultScheduleTimeout = 60 * time.Second

// DefaultPodGroupBackoff is the Gang plugin's longest wait before a rejected gang is tried again
// when the args do not say: what made it fail may have been a view of the nodes a moment old.
const DefaultPodGroupBackoff = 10 * time.Second

// DecodeGang reads GangArgs from a plugin's args (nil means all defaults) and validates them.
func DecodeGang(obj runtime.Object) (*GangArgs, error) {
	args := &GangArgs{}
	if err := decodeRaw(obj, args, "Gang"); err != nil {
		return nil, err
	}
	if args.DefaultScheduleTimeoutSeconds == 0 {
		args.DefaultScheduleTimeoutSeconds = int32(DefaultScheduleTimeout / time.Second)
	}
	if args.PodGroupBackoffSeconds == 0 {
		args.PodGroupBackoffSeconds = int32(DefaultPodGroupBackoff / time.Second)
	}
	for _, f := range []struct {
		name    string
		seconds int32
	}{{"defaultScheduleTimeoutSeconds", args.DefaultScheduleTimeoutSeconds}, {"podGroupBackoffSeconds", args.PodGroupBackoffSeconds}} {
		if f.seconds < 0 {
			return nil, fmt.Errorf("%s args: %w", "Gang", field.Invalid(field.NewPath(f.name), f.seconds, "must be at least 1"))
		}
	}
	return args, nil
}

// ScheduleTimeout is the default wait for a gang.
func (a *GangArgs) ScheduleTimeout() time.Duration {
	return time.Duration(a.DefaultScheduleTimeoutSeconds) * time.Second
}

// PodGroupBackoff is the longest wait of a rejected gang before it is tried again.
func (a *GangArgs) PodGroupBackoff() time.Duration {
	return time.Duration(a.PodGroupBackoffSeconds) * time.Second
}
