package reclaim

import (
	"context"
	"math"

	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/queue-scheduler/queue-scheduler/pkg/gangs"
)

// OrderedScoreFuncs chooses among the candidate nodes of a single pod: first the node whose victims
// take no gang whole (surplus members of any gang go before a gang is taken whole, whatever the
// priorities), then as the Evaluator does by default: fewest PDB violations, the lowest highest
// victim priority, the smallest sum of priorities, the fewest pods; then, when usage moves the
// shares, the node whose victims' queues used the most as the usage history remembers it; then the
// latest earliest start.
func (r *Reclaim) OrderedScoreFuncs(_ context.Context, victims map[string]*extenderv1.Victims) []func(string) int64 {
	remembered := r.rememberedOfVictims()
	return []func(string) int64{
		func(node string) int64 { return -int64(r.wholeGangs(victims[node])) },
		func(node string) int64 { return -victims[node].NumPDBViolations },
		func(node string) int64 {
			highest := int64(math.MinInt32)
			for _, p := range victims[node].Pods {
				highest = max(highest, int64(corev1helpers.PodPriority(p)))
			}
			return -highest
		},
		func(node string) int64 {
			var sum int64
			for _, p := range victims[node].Pods {
				sum += int64(corev1helpers.PodPriority(p)) + math.MaxInt32 + 1
			}
			return -sum
		},
		func(node string) int64 { return -int64(len(victims[node].Pods)) },
		func(node string) int64 { return remembered(victims[node]) },
		func(node string) int64 {
			earliest := int64(math.MaxInt64)
			for _, p := range victims[node].Pods {
				earliest = min(earliest, startOf(p))
			}
			return earliest
		},
	}
}

// rememberedOfVictims scores a node's victims by the remembered share of the least-used queue they
// take from (policy.RememberedShare, in millionths): the node that spares the queues that used less
// scores higher. Each queue's share is read once per call.
func (r *Reclaim) rememberedOfVictims() func(*extenderv1.Victims) int64 {
	if !r.remembers() {
		return func(*extenderv1.Victims) int64 { return 0 }
	}
	snap := r.acct.Snapshot()
	shares := map[string]float64{}
	return func(v *extenderv1.Victims) int64 {
		if v == nil || len(v.Pods) == 0 {
			return 0
		}
		least := math.Inf(1)
		for _, p := range v.Pods {
			queue, err := r.acct.QueueOf(p)
			if err != nil {
				continue
			}
			share, ok := shares[queue]
			if !ok {
				share = r.rememberedShare(snap, queue)
				shares[queue] = share
			}
			least = min(least, share)
		}
		if math.IsInf(least, 1) {
			return 0
		}
		return int64(min(least*1e6, math.MaxInt64/2))
	}
}

// wholeGangs counts the gangs that the victims leave short of their minimums (gangs.Complete):
// those taken whole.
func (r *Reclaim) wholeGangs(v *extenderv1.Victims) int {
	if v == nil {
		return 0
	}
	taken := map[string]*gangs.Members{}
	for _, p := range v.Pods {
		if key := r.acct.Gangs.Key(p); key != "" {
			if taken[key] == nil {
				taken[key] = &gangs.Members{}
			}
			taken[key].Add(p)
		}
	}
	whole := 0
	for key, t := range taken {
		if pg, bound, ok := r.gangBound(key); !ok || !gangs.Complete(pg, bound.Without(*t)) {
			whole++
		}
	}
	return whole
}
