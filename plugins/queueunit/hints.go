package queueunit

import (
	"context"

	fwk "k8s.io/kube-scheduler/framework"
)

// EventsToRegister registers no cluster event: a unit dequeued or deleted reaches its held pods
// through the accounting's informer on QueueUnits (see onUnit), the one watch of that kind in the
// process. An empty list keeps other events from waking held pods for nothing.
func (p *QueueUnit) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return nil, nil
}
