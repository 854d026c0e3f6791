package accounting

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	quota "k8s.io/apiserver/pkg/quota/v1"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

// Refusal says why a pod may not be scheduled now.
type Refusal struct {
	// Message names the queue, the resource and the rule.
	Message string
	// WaitsForShares is set when only the recomputation of the shares stands in the way: the pod is
	// worth trying again as soon as they are fresh.
	WaitsForShares bool
	// AtCapability is set when the queue or an ancestor would exceed its capability: more nodes do
	// not help, only the queue's own pods leaving (or a larger capability) does.
	AtCapability bool
}

// waitingForShares begins the message of a refusal that only waits for fresh shares.
const waitingForShares = "waiting for the fair shares"

func waitForShares(queue string, over v1.ResourceName) *Refusal {
	return &Refusal{WaitsForShares: true, Message: fmt.Sprintf(
		waitingForShares+": queue %q is at its share of %s until the shares include the latest demand", queue, over)}
}

func refuse(format string, args ...any) *Refusal {
	return &Refusal{Message: fmt.Sprintf(format, args...)}
}

func atCapability(format string, args ...any) *Refusal {
	return &Refusal{Message: fmt.Sprintf(format, args...), AtCapability: true}
}

// Admit says why a pod of queue that requests req may not be scheduled now, or nil when it may. A
// queue and each of its ancestors must stay within capability; and the queue must be below its
// deserved share in every resource the pod requests, unless the pod fits in what is idle and claimed
// by no queue below its share (borrowing, so that queues that each want more than their share do not
// leave the cluster idle). The capabilities count what the queue's admitted PodGroups reserve
// beyond what their members hold, but own (the pod's own group, "" for none): a gang's room is not
// taken by other pods of its queue. It reads the accounting only: no API calls.
func (a *Accounting) Admit(queue string, own WorkKey, req v1.ResourceList) *Refusal {
	return a.admit(queue, req, admitOptions{heldBack: a.reserved(queue, own, false)})
}

// AdmitPod is Admit for a pod of queue that requests req. The scheduler may see a new pod before the
// accounting counts it: until then the shares cannot include its demand, and a refusal for the share
// only waits for them (it is counted, marking the shares stale, and they are recomputed).
func (a *Accounting) AdmitPod(pod *v1.Pod, queue string, req v1.ResourceList) *Refusal {
	return a.admit(queue, req, admitOptions{heldBack: a.reserved(queue, a.PodWork(pod), false), uncounted: !a.Counted(pod), pod: true})
}

// AdmitQueuedPod is AdmitPod for a pod about to enter the scheduling queue. Until the shares include
// the pod, the queue's other pending pods may be scheduled before it and take the room it sees now:
// it is admitted only if it would be with all of them allocated, and otherwise waits for the shares,
// a moment, rather than fail a scheduling attempt on them. Once they include it, the rules are
// AdmitPod's.
func (a *Accounting) AdmitQueuedPod(pod *v1.Pod, queue string, req v1.ResourceList) *Refusal {
	opts := admitOptions{heldBack: a.reserved(queue, a.PodWork(pod), false), uncounted: !a.Counted(pod), pod: true}
	if !a.SharesInclude(pod) {
		opts.ahead = a.pendingBesides(pod, queue)
	}
	return a.admit(queue, req, opts)
}

// PodWork is the key of the admitted work a pod belongs to: its PodGroup, or "".
func (a *Accounting) PodWork(pod *v1.Pod) WorkKey {
	if key := a.GangKey(pod); key != "" {
		return WorkKey("PodGroup/" + key)
	}
	return ""
}

// AdmitUnit says why a unit of work (a PodGroup's minResources, a QueueUnit's resource) may not be
// admitted to queue now, or nil when it may: all of req, on top of what the queue holds and what
// its admitted units that have not started reserve, must fit its capabilities and its deserved
// share, or else fit in the idle capacity nobody below their share can claim.
func (a *Accounting) AdmitUnit(queue string, req, reserved v1.ResourceList) *Refusal {
	return a.admit(queue, req, admitOptions{reserved: reserved, whole: true})
}

// admitOptions vary the admission check.
type admitOptions struct {
	// reserved is added to the queue's allocation.
	reserved v1.ResourceList
	// whole requires allocation + request within deserved, not only allocation below it.
	whole bool
	// heldBack is added to the queue's allocation for the capability checks only.
	heldBack v1.ResourceList
	// uncounted: the work is not counted in the demand yet, so the shares cannot include it.
	uncounted bool
	// ahead is what the queue's other pending pods request: they may be allocated first. Set only
	// until the shares include the pod, it can turn it away only to wait for them.
	ahead v1.ResourceList
	// pod: the work is one pod, which needs no fresh shares while the cluster holds all the demand
	// there is (uncontended).
	pod bool
}

func (a *Accounting) admit(queue string, req v1.ResourceList, opts admitOptions) *Refusal {
	q, ok := a.Queue(queue)
	if !ok {
		return nil
	}
	if r := a.withinCapability(q, req, quota.Add(opts.reserved, opts.heldBack)); r != nil {
		return r
	}
	deserved := a.deservedOf(queue)
	allocated := quota.Add(a.allocatedTo(queue), opts.reserved)
	over := overShare(allocated, deserved, req, opts.whole)
	if over == "" && len(opts.ahead) > 0 {
		if over = overShare(quota.Add(allocated, opts.ahead), deserved, req, opts.whole); over != "" {
			return a.waitForSharesUnlessUncontended(queue, over, req, opts)
		}
	}
	if over == "" {
		return nil
	}
	if a.SharesStale() || opts.uncounted {
		// What is idle and unclaimed is only known once the shares include the latest demand.
		return a.waitForSharesUnlessUncontended(queue, over, req, opts)
	}
	if a.borrowable(quota.Add(req, opts.reserved)) {
		return nil
	}
	d, al, r := deserved[over], allocated[over], req[over]
	return refuse("queue %q is at its deserved share of %s (%s allocated, %s deserved, %s requested) and no idle %s is left to borrow",
		queue, over, al.String(), d.String(), r.String(), over)
}

// waitForSharesUnlessUncontended turns a pod away to wait for the shares, unless the cluster holds
// all the demand there is besides it: then every queue can have its whole demand whatever the
// shares say, and waiting would only delay the pod.
func (a *Accounting) waitForSharesUnlessUncontended(queue string, over v1.ResourceName, req v1.ResourceList, opts admitOptions) *Refusal {
	if opts.pod && a.uncontended(req, !opts.uncounted) {
		return nil
	}
	return waitForShares(queue, over)
}

// uncontended says whether req fits beside all the demand there is: what the queues hold, what
// every pending pod asks for (counted says whether req is among them), and what their units and
// PodGroups asked for when the shares were last computed, none of those having changed since. It
// reads totals kept as pods come and go: no queue is visited.
func (a *Accounting) uncontended(req v1.ResourceList, counted bool) bool {
	a.shares.mu.RLock()
	unitDemand, computed := a.shares.unitDemand, a.shares.computedGen
	a.shares.mu.RUnlock()
	if a.shares.untrackedGen.Load() > computed {
		return false
	}
	capacity := a.shares.capacityOf.get()
	a.usage.mu.RLock()
	defer a.usage.mu.RUnlock()
	pending := a.usage.pending
	if counted {
		pending = quota.SubtractWithNonNegativeResult(pending, req)
	}
	return fitsBeside(req, capacity, a.usage.allocated, pending, unitDemand)
}

// fitsBeside says whether req fits in capacity once what is taken is set aside, in every resource
// it requests.
func fitsBeside(req, capacity v1.ResourceList, taken ...v1.ResourceList) bool {
	for name, r := range req {
		if r.IsZero() {
			continue
		}
		free := capacity[name].DeepCopy()
		for _, t := range taken {
			free.Sub(t[name])
		}
		if free.Cmp(r) < 0 {
			return false
		}
	}
	return true
}

// withinCapability checks the queue and its ancestors against their capabilities, with what the
// queue's admitted work reserves added to what they hold.
func (a *Accounting) withinCapability(q *schedulingv1beta1.Queue, req, reserved v1.ResourceList) *Refusal {
	var refusal *Refusal
	a.tree().walk(q.Name, func(name string) {
		if refusal != nil {
			return
		}
		if cur, ok := a.Queue(name); ok && len(cur.Spec.Capability) > 0 {
			refusal = exceeds(cur, a.subtreeAllocated(name), reserved, req)
		}
	})
	return refusal
}

// exceeds says which capability of q used + reserved + req would exceed, or nil.
func exceeds(q *schedulingv1beta1.Queue, used, reserved, req v1.ResourceList) *Refusal {
	for name, limit := range q.Spec.Capability {
		r, asked := req[name]
		if !asked || r.IsZero() {
			continue
		}
		u, held := used[name], reserved[name]
		total := u.DeepCopy()
		total.Add(held)
		total.Add(r)
		if total.Cmp(limit) <= 0 {
			continue
		}
		if held.IsZero() {
			return atCapability("queue %q would exceed its capability of %s: %s allocated + %s requested > %s",
				q.Name, name, u.String(), r.String(), limit.String())
		}
		return atCapability("queue %q would exceed its capability of %s: %s allocated + %s reserved by admitted work + %s requested > %s",
			q.Name, name, u.String(), held.String(), r.String(), limit.String())
	}
	return nil
}

// overShare names a requested resource in which the queue already holds its deserved share (with
// whole, in which allocated + req would exceed it), or "".
func overShare(allocated, deserved, req v1.ResourceList, whole bool) v1.ResourceName {
	for name, r := range req {
		if r.IsZero() {
			continue
		}
		d, ok := deserved[name]
		if !ok {
			return name
		}
		al := allocated[name].DeepCopy()
		if whole {
			al.Add(r)
			if al.Cmp(d) > 0 {
				return name
			}
		} else if al.Cmp(d) >= 0 {
			return name
		}
	}
	return ""
}

// borrowable says whether req fits in what is idle once the queues below their share have what they
// can still claim.
func (a *Accounting) borrowable(req v1.ResourceList) bool {
	capacity, claimable := a.shareSnapshot()
	return fitsBeside(req, capacity, a.totalAllocated(), claimable)
}

// totalAllocated is what all queues hold together, kept current as pods come and go, so that no
// scheduling cycle sums it up.
func (a *Accounting) totalAllocated() v1.ResourceList {
	a.usage.mu.RLock()
	defer a.usage.mu.RUnlock()
	return a.usage.allocated.DeepCopy()
}

// claimableOf is what the queues below their share can still claim: per queue, what it deserves up
// to its demand, less what it holds.
func claimableOf(deserved, demands map[string]v1.ResourceList, leaves []string, usage map[string]QueueUsage) v1.ResourceList {
	total := v1.ResourceList{}
	for _, name := range leaves {
		u, demand := usage[name], demands[name]
		for r, d := range deserved[name] {
			want := d.DeepCopy()
			if dm, ok := demand[r]; !ok || dm.Cmp(want) < 0 {
				want = dm.DeepCopy()
			}
			want.Sub(u.Allocated[r])
			if want.Sign() > 0 {
				acc := total[r]
				acc.Add(want)
				total[r] = acc
			}
		}
	}
	return total
}
