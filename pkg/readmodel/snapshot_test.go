package readmodel

import (
	"context"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	visibilityv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/visibility/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/generated/clientset/versioned/fake"
	"github.com/queue-scheduler/queue-scheduler/test/util"
)

// The forecast's snapshot holds what the forecast read and what it answered: each node's
// allocatable and its running pods with their queue, requests and expected end; the pending work in
// the scheduler's order, with the nodes it may run on, its runtime and its expected start.
func TestForecastSnapshotHoldsTheForecastsInputAndAnswer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := time.Now().Add(-100 * time.Second).Truncate(time.Second)
	pod := func(name, cpu string) *v1.Pod {
		return util.MakePod("ns", name).UID(name).Label(schedulingv1beta1.QueueLabel, "q").Req(map[v1.ResourceName]string{v1.ResourceCPU: cpu}).Obj()
	}
	running := pod("running", "8")
	running.Spec.NodeName, running.Spec.ActiveDeadlineSeconds = "a", ptr.To[int64](600)
	running.Status.Phase, running.Status.StartTime = v1.PodRunning, ptr.To(metav1.NewTime(started))
	pinned, free, nowhere := pod("pinned", "4"), pod("free", "2"), pod("nowhere", "1")
	pinned.Spec.NodeSelector, nowhere.Spec.NodeSelector = map[string]string{"zone": "a"}, map[string]string{"zone": "z"}
	free.CreationTimestamp = metav1.NewTime(time.Now().Add(time.Minute))
	nowhere.CreationTimestamp = metav1.NewTime(time.Now().Add(2 * time.Minute))
	zoneA := util.MakeNode("a", "8", "16Gi")
	zoneA.Labels = map[string]string{"zone": "a"}
	kube := kubefake.NewClientset(zoneA, util.MakeNode("b", "8", "16Gi"), running, pinned, free, nowhere)
	acct := startAccounting(t, ctx, fake.NewSimpleClientset(util.MakeQueue("q").Obj()), kube)
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return acct.Pods.PodCount("q") == 4 && acct.Synced(), nil
	}); err != nil {
		t.Fatalf("the accounting never counted the pods: %d", acct.Pods.PodCount("q"))
	}
	snap, err := (&Model{acct: acct}).ForecastSnapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Name != visibilityv1beta1.CurrentSnapshot || snap.Resolution.Duration != forecastResolution || !slices.Contains(snap.Resources, v1.ResourceCPU) {
		t.Errorf("snapshot %s of resolution %s over %v", snap.Name, snap.Resolution.Duration, snap.Resources)
	}
	end := started.Add(630 * time.Second) // the bound and the default grace
	if len(snap.Nodes) != 2 || snap.Nodes[0].Name != "a" || len(snap.Nodes[0].Running) != 1 {
		t.Fatalf("nodes %+v, want a with the running pod, and b", snap.Nodes)
	}
	r := snap.Nodes[0].Running[0]
	if cpu := snap.Nodes[0].Allocatable[v1.ResourceCPU]; cpu.String() != "8" || r.Queue != "q" || r.Requests.Cpu().String() != "8" ||
		len(r.Requests) != 1 || r.EndP50 == nil || !r.EndP50.Equal(ptr.To(metav1.NewMicroTime(end))) {
		t.Errorf("node a offers %s cpu, runs %+v: want 8 cpu, and the pod of q holding 8 cpu (and no pod count) until %v", cpu.String(), r, end)
	}
	if len(snap.Pending) != 3 || snap.Pending[0].Workload.Name != "pinned" || snap.Pending[1].Workload.Name != "free" {
		t.Fatalf("pending %+v, want pinned, then free, then nowhere", snap.Pending)
	}
	if w := snap.Pending[2]; len(w.Members) != 1 || !w.Members[0].NoNode || w.Start.P50 != nil {
		t.Errorf("nowhere: %+v, want a member no node takes, and no start", w)
	}
	pinnedWork, freeWork := snap.Pending[0], snap.Pending[1]
	if m := pinnedWork.Members; len(m) != 1 || m[0].Count != 1 || m[0].Requests.Cpu().String() != "4" || !slices.Equal(m[0].Nodes, []string{"a"}) {
		t.Errorf("pinned's members %+v, want one of 4 cpu on node a only", m)
	}
	if s := pinnedWork.Start.P50; s == nil || s.Before(ptr.To(metav1.NewMicroTime(end))) || end.Add(forecastResolution).Before(s.Time) {
		t.Errorf("pinned expected at %v, want the running pod's end %v, to within %s", s, end, forecastResolution)
	}
	if pinnedWork.Runtime.P50.Duration != defaultRuntime.P50 || pinnedWork.Bound != nil {
		t.Errorf("pinned runs %+v bound %v, want the default runtime and no bound", pinnedWork.Runtime, pinnedWork.Bound)
	}
	if m := freeWork.Members; len(m) != 1 || m[0].Nodes != nil {
		t.Errorf("free's members %+v, want one that may run anywhere", m)
	}
	if s := freeWork.Start.P50; s == nil || snap.ForecastTime.Add(forecastResolution).Before(s.Time) {
		t.Errorf("free expected at %v, want at once (%v)", s, snap.ForecastTime)
	}
}
