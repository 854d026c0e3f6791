package queuesim

import (
	"context"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
)

// Annotations the kubelet stand-in reads from a pod.
const (
	// RuntimeAnnotation is how long the pod runs once started, in simulated time ("5m").
	RuntimeAnnotation = "queuesim.queue-scheduler.io/runtime"
	// FailAnnotation set to "true" ends the pod Failed instead of Succeeded.
	FailAnnotation = "queuesim.queue-scheduler.io/fail"
)

// kubelet stands in for the kubelets of the simulated nodes: a pod bound to a node starts Running
// at once and, after the runtime its annotation asks for (divided by the time scale), ends Succeeded
// or Failed; at its activeDeadlineSeconds, if that comes first, it ends Failed. A pod deleted
// meanwhile (evicted) simply stops. Pods with neither run until they are deleted.
type kubelet struct {
	client kubernetes.Interface
	clock  *clock

	mu      sync.Mutex
	started map[types.UID]bool
}

func newKubelet(client kubernetes.Interface, c *clock) *kubelet {
	return &kubelet{client: client, clock: c, started: map[types.UID]bool{}}
}

// watch starts pods as the informer sees them bound.
func (k *kubelet) watch(ctx context.Context, pods cache.SharedIndexInformer) error {
	_, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { k.onPod(ctx, obj) },
		UpdateFunc: func(_, obj any) { k.onPod(ctx, obj) },
		DeleteFunc: func(obj any) {
			if pod, ok := unwrapPod(obj); ok {
				k.forget(pod.UID)
			}
		},
	})
	return err
}

func (k *kubelet) onPod(ctx context.Context, obj any) {
	pod, ok := obj.(*v1.Pod)
	if !ok || pod.Spec.NodeName == "" || pod.DeletionTimestamp != nil || pod.Status.Phase != v1.PodPending || !k.claim(pod.UID) {
		return
	}
	go k.run(ctx, pod)
}

// claim says whether the pod is new to the kubelet, and marks it started.
func (k *kubelet) claim(uid types.UID) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.started[uid] {
		return false
	}
	k.started[uid] = true
	return true
}

func (k *kubelet) forget(uid types.UID) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.started, uid)
}

// run marks the pod Running, waits out its runtime, and ends it.
func (k *kubelet) run(ctx context.Context, pod *v1.Pod) {
	running, err := k.setStatus(ctx, pod.DeepCopy(), func(p *v1.Pod) {
		now := metav1.Now()
		p.Status.Phase = v1.PodRunning
		p.Status.StartTime = &now
		p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: now})
	})
	if err != nil || running == nil {
		k.forget(pod.UID) // gone or going: nothing to run
		return
	}
	end, ok := runFor(pod, k.clock)
	if !ok {
		return
	}
	select {
	case <-ctx.Done():
		return
	case <-time.After(end.after):
	}
	if _, err := k.setStatus(ctx, running, func(p *v1.Pod) { p.Status.Phase, p.Status.Reason = end.phase, end.reason }); err != nil && ctx.Err() == nil {
		klog.FromContext(ctx).V(4).Info("Pod not ended", "pod", klog.KObj(pod), "err", err)
	}
}

// podEnd is how a pod's run ends: after how long, in real time, and in which phase.
type podEnd struct {
	after  time.Duration
	phase  v1.PodPhase
	reason string
}

// askedRuntime is the runtime the pod asks its kubelet for (RuntimeAnnotation), in simulated time;
// ok is false for none.
func askedRuntime(pod *v1.Pod) (runtime time.Duration, ok bool) {
	runtime, err := time.ParseDuration(pod.Annotations[RuntimeAnnotation])
	return runtime, err == nil
}

// runFor is how the pod's run ends: after its runtime, Succeeded (Failed when asked), or at its
// activeDeadlineSeconds if that comes first, Failed with the kubelet's reason DeadlineExceeded. ok is
// false for a pod that runs until it is deleted.
func runFor(pod *v1.Pod, c *clock) (end podEnd, ok bool) {
	end.after, end.phase = -1, v1.PodSucceeded
	if runtime, ok := askedRuntime(pod); ok {
		end.after = c.real(runtime)
		if pod.Annotations[FailAnnotation] == "true" {
			end.phase = v1.PodFailed
		}
	}
	if s := pod.Spec.ActiveDeadlineSeconds; s != nil && (end.after < 0 || time.Duration(*s)*time.Second < end.after) {
		end = podEnd{after: time.Duration(*s) * time.Second, phase: v1.PodFailed, reason: "DeadlineExceeded"}
	}
	return end, end.after >= 0
}

// setStatus applies change to the pod's status and writes it, reading the pod again when another
// writer changed it meanwhile. A pod gone or being deleted (evicted) is left alone: it returns nil.
func (k *kubelet) setStatus(ctx context.Context, pod *v1.Pod, change func(*v1.Pod)) (*v1.Pod, error) {
	api := k.client.CoreV1().Pods(pod.Namespace)
	var out *v1.Pod
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		if pod == nil || pod.DeletionTimestamp != nil {
			return nil
		}
		changed := pod.DeepCopy()
		change(changed)
		written, err := api.UpdateStatus(ctx, changed, metav1.UpdateOptions{})
		switch {
		case err == nil:
			out = written
		case apierrors.IsConflict(err):
			latest, getErr := api.Get(ctx, pod.Name, metav1.GetOptions{})
			if getErr != nil || latest.UID != pod.UID {
				pod = nil
				return ignoreNotFound(getErr)
			}
			pod = latest
		}
		return err
	})
	return out, ignoreNotFound(err)
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func unwrapPod(obj any) (*v1.Pod, bool) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	pod, ok := obj.(*v1.Pod)
	return pod, ok
}

// clock maps simulated time to real time: TimeScale simulated seconds pass in a real second.
type clock struct {
	start time.Time
	scale float64
}

// real is how long d of simulated time takes.
func (c *clock) real(d time.Duration) time.Duration { return time.Duration(float64(d) / c.scale) }

// now is the simulated time since the start.
// simulated is the simulated time of a real moment.
func (c *clock) simulated(t time.Time) time.Duration {
	return time.Duration(float64(t.Sub(c.start)) * c.scale)
}

func (c *clock) now() time.Duration { return time.Duration(float64(time.Since(c.start)) * c.scale) }
