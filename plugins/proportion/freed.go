package proportion

import (
	"sync"

	v1 "k8s.io/api/core/v1"
)

// heldAllocations is what each queue held at its last usage change, as the accounting counted it.
type heldAllocations struct {
	mu   sync.Mutex
	last map[string]v1.ResourceList
}

// fell records what queue holds now and says whether it holds less of some resource than before.
func (h *heldAllocations) fell(queue string, now v1.ResourceList) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	before := h.last[queue]
	if h.last == nil {
		h.last = map[string]v1.ResourceList{}
	}
	h.last[queue] = now
	for name, b := range before {
		if q := now[name]; q.Cmp(b) < 0 {
			return true
		}
	}
	return false
}

// onUsageChange brings back the pods a queue turned away at its share once it holds less: the
// accounting may count a pod's leaving after the scheduler's own event for it was handled, so that
// event alone may find the queue still full.
func (p *Proportion) onUsageChange(queue string) {
	if p.held.fell(queue, p.acct.Usage(queue).Allocated) {
		p.Activate(queue)
	}
}
