package cli

import (
	"strconv"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

type queue = schedulingv1beta1.Queue

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
