// Package queuesim plays a short scenario end to end and runs `queuesim up`, each on the embedded
// control plane queuesim starts itself.
package queuesim

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/queue-scheduler/queue-scheduler/pkg/queueclient"
	"github.com/queue-scheduler/queue-scheduler/pkg/queuesim"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// Three queues with weights 1:2:3 and more demand than 24 cpu: the report shows them at 4/8/12, the
// two short pods that came first (of a higher priority, so that reclaim takes the long ones first)
// have finished, the files are written and the chart parses.
const fairness = `name: weights
duration: 90s
timeScale: 5
sample: 5s
nodes:
- {count: 3, cpu: "8", memory: 32Gi}
priorityClasses:
- {name: short, value: 100}
queues:
- {name: one, weight: 1}
- {name: two, weight: 2}
- {name: three, weight: 3}
jobs:
- {name: short, queue: one, count: 2, every: 100ms, cpu: "1", runtime: 10s, priorityClass: short}
- {name: one, queue: one, at: 1s, count: 24, every: 100ms, cpu: "1", runtime: 1h}
- {name: two, queue: two, at: 1s, count: 24, every: 100ms, cpu: "1", runtime: 1h}
- {name: three, queue: three, at: 1s, count: 24, every: 100ms, cpu: "1", runtime: 1h}
`

func TestRunReportsTheShares(t *testing.T) {
	s, err := queuesim.Parse("weights.yaml", []byte(fairness))
	if err != nil {
		t.Fatal(err)
	}
	var progress bytes.Buffer
	result, err := queuesim.Run(context.Background(), s, queuesim.Options{Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	// Progress into a log is a line of its own, never rewritten with carriage returns.
	if strings.Contains(progress.String(), "\r") {
		t.Errorf("progress written to a log holds carriage returns: %q", progress.String())
	}
	for name, want := range map[string]float64{"one": 4, "two": 8, "three": 12} {
		q, ok := result.Queue(name)
		if !ok {
			t.Fatalf("no result for queue %s", name)
		}
		if share := q.FinalAllocated / result.Capacity; share < want/24-0.05 || share > want/24+0.05 {
			t.Errorf("queue %s ends with %.1f of %.0f cpu, want %.0f (±5%% of the cluster); %d evictions; samples: %s",
				name, q.FinalAllocated, result.Capacity, want, q.Evictions, samplesOf(result, name))
		}
		if q.FinalDeserved != want {
			t.Errorf("queue %s deserves %.1f at the end, want %.0f", name, q.FinalDeserved, want)
		}
	}
	if one, _ := result.Queue("one"); one.Completed != 2 {
		t.Errorf("queue one completed %d pods, want the 2 short ones: %+v", one.Completed, one)
	}
	if result.Utilisation < 0.5 {
		t.Errorf("utilisation %.2f, want the cluster mostly busy", result.Utilisation)
	}
	if !strings.Contains(progress.String(), "t=") {
		t.Errorf("no progress line: %q", progress.String())
	}
	dir := t.TempDir()
	if err := result.Save(dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{queuesim.ReportFile, queuesim.ChartFile, queuesim.SeriesFile, queuesim.ResultFile} {
		if info, err := os.Stat(filepath.Join(dir, f)); err != nil || info.Size() == 0 {
			t.Errorf("%s not written (err %v)", f, err)
		}
	}
	chart, err := os.Open(filepath.Join(dir, queuesim.ChartFile))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = chart.Close() }()
	for dec := xml.NewDecoder(chart); ; {
		if _, err := dec.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("the chart is not well-formed: %v", err)
		}
	}
}

// queuesim up serves a working API: the typed client and kubectl queue work with its kubeconfig,
// deleting a Job or a namespace deletes what it holds (testDeletion), and stopping it removes the
// kubeconfig.
func TestUp(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	kubeconfigPath := filepath.Join(t.TempDir(), "kubeconfig")
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- queuesim.Up(ctx, queuesim.UpOptions{Kubeconfig: kubeconfigPath, Out: io.Discard, Ready: func(p string) { ready <- p }})
	}()
	var path string
	select {
	case path = <-ready:
	case err := <-done:
		t.Fatalf("up ended early: %v", err)
	case <-time.After(2 * time.Minute):
		t.Fatal("up not ready within 2 minutes")
	}
	config, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	queues, err := queueclient.New(config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := queues.SchedulingV1beta1().Queues().Get(ctx, "default", metav1.GetOptions{}); err != nil {
		t.Fatalf("typed client: %v", err)
	}
	if out, err := util.KubectlQueue(ctx, path, "create", "from-up", "--weight", "3", "--all-namespaces"); err != nil || out != "queue/from-up created\n" {
		t.Fatalf("kubectl queue create: %v %q", err, out)
	}
	kube, err := kubernetes.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	testDeletion(ctx, t, kube, "from-up")
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("up: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("up did not stop within a minute")
	}
	if _, err := os.Stat(kubeconfigPath); !os.IsNotExist(err) {
		t.Errorf("the kubeconfig is left behind (stat: %v)", err)
	}
}

// samplesOf lists a queue's samples as "at: allocated/deserved (pending)", for a failure message.
func samplesOf(r *queuesim.Result, queue string) string {
	var b strings.Builder
	for _, smp := range r.Samples {
		if smp.Queue == queue {
			fmt.Fprintf(&b, "%s: %.0f/%.0f (%d) ", smp.At, smp.Allocated, smp.Deserved, smp.Pending)
		}
	}
	return b.String()
}
