package accounting

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/queue-scheduler/queue-scheduler/pkg/history"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// BenchmarkRecomputeShares computes the shares of 1,000 queues, each holding 5 pods and asking for
// 5 more, on 100 nodes: the memory and scale cases of make bench, in miniature. It runs without a
// usage history, with one kept (the default: shares by weight), and with one moving the shares; and
// with the tree kept from one computation to the next (a change of usage) or built anew (a change
// of the queues, units, PodGroups or nodes).
func BenchmarkRecomputeShares(b *testing.B) {
	for _, h := range []struct {
		name     string
		settings history.Settings
	}{
		{"history-off", history.Settings{}},
		{"history-kept", history.Settings{HalfLife: 24 * time.Hour, EntryCharge: time.Minute}},
		{"history-factor-1", history.Settings{HalfLife: 24 * time.Hour, EntryCharge: time.Minute, Factor: 1}},
	} {
		b.Run(h.name, func(b *testing.B) { benchmarkRecomputeShares(b, Config{History: h.settings}, kept) })
		b.Run(h.name+"/one-queue-moved", func(b *testing.B) { benchmarkRecomputeShares(b, Config{History: h.settings}, oneQueueMoved) })
		b.Run(h.name+"/tree-anew", func(b *testing.B) { benchmarkRecomputeShares(b, Config{History: h.settings}, anew) })
	}
}

// What changes before each computation of BenchmarkRecomputeShares: nothing; one queue's demand
// (a pod comes or goes), then the snapshot built after the computation; the queues, units,
// PodGroups or nodes (the tree built anew, and a whole snapshot after it).
const (
	kept = iota
	oneQueueMoved
	anew
)

func benchmarkRecomputeShares(b *testing.B, cfg Config, change int) {
	const queues, podsEach = 1000, 10
	objs := []runtime.Object{util.MakeQueue("root").Obj()}
	var kube []runtime.Object
	for i := range 100 {
		kube = append(kube, util.MakeNode(fmt.Sprintf("n%d", i), "32", "128Gi"))
	}
	for q := range queues {
		name := fmt.Sprintf("q%04d", q)
		objs = append(objs, util.MakeQueue(name).Weight(int32(1+q%3)).Obj())
		for p := range podsEach {
			node := ""
			if p < podsEach/2 {
				node = fmt.Sprintf("n%d", q%100)
			}
			kube = append(kube, pod(name, fmt.Sprintf("%s-%d", name, p), "1", node))
		}
	}
	a := newTestAccountingWith(b, cfg, objs, kube...)
	b.ReportAllocs()
	b.ResetTimer()
	comer := pod("q0500", "comer", "1", "")
	i := 0
	for b.Loop() {
		switch change {
		case oneQueueMoved:
			if i++; i%2 == 1 {
				a.Pods.upsert(comer)
			} else {
				a.Pods.remove(comer)
			}
		case anew:
			a.shares.markDirty()
		}
		compute(a)
	}
}
