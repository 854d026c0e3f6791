package proportion

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
)

// onRoomFreed brings back the pods a queue turned away at its share once it holds less: the
// accounting may count a pod's leaving after the scheduler's own event for it was handled, so that
// event alone may find the queue still full. It also lets the first waiting pods of every queue try
// the room, in their queue's order (line): the room is idle, and any queue may borrow it.
func (p *Proportion) onRoomFreed(freed accounting.RoomFreed) {
	p.Activate(freed.Queue)
	if pods := p.line.next(freed, p.clock.Now(), p.waiting); len(pods) > 0 && p.Activator != nil {
		p.Activator(klog.Background(), pods)
	}
}

// waitForRoom keeps a pod PreFilter saw in the line, where room that frees finds it; not a gang's
// member, tried with its group (Gang).
func (p *Proportion) waitForRoom(pod *v1.Pod, queue string, gang bool, req v1.ResourceList) {
	if gang {
		p.line.remove(pod)
		return
	}
	p.line.add(pod, queue, req)
}

// waiting says whether pod is still there, of the same UID, and not bound.
func (p *Proportion) waiting(pod *v1.Pod) bool {
	if p.pods == nil {
		return true
	}
	live, err := p.pods.Pods(pod.Namespace).Get(pod.Name)
	return err == nil && live.UID == pod.UID && live.Spec.NodeName == ""
}
