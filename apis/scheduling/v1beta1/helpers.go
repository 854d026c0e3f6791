package v1beta1

// EffectiveState is the state in force for a queue: status.state once the controller has written it,
// else the requested spec.state, else Open.
func (q *Queue) EffectiveState() QueueState {
	if q.Status.State != "" {
		return q.Status.State
	}
	if q.Spec.State != "" {
		return q.Spec.State
	}
	return QueueStateOpen
}
