package forecast

import (
	"fmt"
	"testing"
	"time"
)

// bigSnapshot is 5,000 nodes of 32 CPUs running 10,000 pods of queueCount queues (100 at least)
// whose ends spread over 24 hours, each at a second of its own within its minute, and 2,000 pieces
// of pending work: 1,900 pods of 1 to 8 CPUs and 100 gangs of 8 pods of 8, spread over the queues.
func bigSnapshot(queueCount int) *Snapshot {
	var queues []Queue
	for q := range queueCount {
		queues = append(queues, queue(fmt.Sprintf("q%03d", q), ""))
	}
	nodes := make([]Node, 5000)
	for i := range nodes {
		n := Node{Name: fmt.Sprintf("node-%04d", i), Free: Vector{32000, 1 << 40, 110}}
		for p := range 2 {
			end := time.Duration((i*2+p)%1440)*time.Minute + time.Duration((i*2+p)*7%60)*time.Second
			r := Running{Queue: queues[(i*2+p)%queueCount].Name, Requests: cpu(16), Ends: Ends{P50: now.Add(end), P90: now.Add(end * 3 / 2)}}
			n.Running = append(n.Running, r)
			n.Free.Add(r.Requests, -1)
		}
		nodes[i] = n
	}
	s := snapshot(nodes, queues)
	for i := range 1900 {
		s.Pending = append(s.Pending, work(fmt.Sprintf("pod-%d", i), queues[i%queueCount].Name, time.Duration(i)*time.Second, time.Hour, cpu(int64(1+i%8))))
	}
	for g := range 100 {
		members := make([]Vector, 8)
		for m := range members {
			members[m] = cpu(8)
		}
		s.Pending = append(s.Pending, work(fmt.Sprintf("gang-%d", g), queues[g%queueCount].Name, time.Duration(g)*time.Minute, 2*time.Hour, members...))
	}
	return s
}

// BenchmarkPredict predicts the starts of 2,000 pieces of work of 100 queues on 5,000 nodes running
// 10,000 pods.
func BenchmarkPredict(b *testing.B) { benchmarkPredict(b, 100) }

// BenchmarkPredictThousandQueues is BenchmarkPredict with the work spread over 1,000 queues.
func BenchmarkPredictThousandQueues(b *testing.B) { benchmarkPredict(b, 1000) }

func benchmarkPredict(b *testing.B, queues int) {
	s := bigSnapshot(queues)
	set := settings()
	set.Resolution = 10 * time.Second
	b.ResetTimer()
	for b.Loop() {
		if got := Predict(s, set); len(got) != 2000 {
			b.Fatalf("%d starts, want 2000", len(got))
		}
	}
}
