package proportion

// onRoomFreed brings back the pods a queue turned away at its share once it holds less: the
// accounting may count a pod's leaving after the scheduler's own event for it was handled, so that
// event alone may find the queue still full.
func (p *Proportion) onRoomFreed(queue string) { p.Activate(queue) }
