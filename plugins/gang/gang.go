// Package gang is the scheduler plugin that places a PodGroup's pods all or nothing: its pods enter
// the active queue once the group is admitted to its queue (Inqueue) and at least minMember of them
// exist (and each task's minTaskMember); siblings are ordered together; reserved members wait at
// Permit until as many are reserved, bounded by the group's timeout; a member that cannot be placed, or a timeout, rejects
// the waiting siblings so that no partial gang is bound and nothing stays reserved.
package gang

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/utils/clock"

	"github.com/queue-scheduler/queue-scheduler/apis/config"
	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/gangs"
	"github.com/queue-scheduler/queue-scheduler/pkg/holdreport"
	"github.com/queue-scheduler/queue-scheduler/pkg/podindex"
	"github.com/queue-scheduler/queue-scheduler/pkg/policy"
)

// Name is the plugin's name in the scheduler configuration.
const Name = "Gang"

// Gang schedules PodGroups all or nothing.
type Gang struct {
	handle fwk.Handle
	acct   *accounting.Accounting
	// attempts are the gangs' reclaims under way, which Reclaim starts: such a gang is neither
	// denied nor stripped of its nominations.
	attempts *gangs.Attempts
	args     *config.GangArgs
	members  *members
	// freed is the room the informers saw freed that a scheduling snapshot may not show yet.
	freed    *freedRoom
	held     *podindex.Index
	reporter *holdreport.Reporter
	failures *failureReport
	// pods reads the scheduler's pod informer.
	pods corelisters.PodLister
	// clock tells the time: gang time-outs, the lapse of denials.
	clock clock.WithDelayedExecution
	// unnominate holds members whose stale nomination to clear.
	unnominate workqueue.TypedRateLimitingInterface[types.NamespacedName]
	// recheckedSpecs is the version of the queues' specs the held gangs were last looked at under
	// (recheckHeld).
	recheckedSpecs atomic.Int64
	// podGroupCreated tells when a PodGroup was created, for the queue order.
	podGroupCreated func(group types.NamespacedName) (time.Time, bool)
}

var (
	_ fwk.PreEnqueuePlugin         = &Gang{}
	_ fwk.QueueSortPlugin          = &Gang{}
	_ fwk.PreFilterPlugin          = &Gang{}
	_ fwk.PostFilterPlugin         = &Gang{}
	_ fwk.PodGroupPostFilterPlugin = &Gang{}
	_ fwk.ReservePlugin            = &Gang{}
	_ fwk.PermitPlugin             = &Gang{}
	_ fwk.EnqueueExtensions        = &Gang{}
)

// New builds the plugin on the scheduler's accounting and the gangs' reclaims under way (which
// Reclaim starts), both of which the composition root (pkg/scheduler) hands it.
func New(ctx context.Context, obj runtime.Object, h fwk.Handle, acct *accounting.Accounting, attempts *gangs.Attempts) (fwk.Plugin, error) {
	args, err := config.DecodeGang(obj)
	if err != nil {
		return nil, err
	}
	pods := h.SharedInformerFactory().Core().V1().Pods()
	g := &Gang{
		handle:   h,
		acct:     acct,
		attempts: attempts,
		args:     args,
		members:  newMembers(acct.Gangs.Members, acct.Pods.Holds, func() int64 { return acct.Snapshot().QueueSpecs }, acct.Clock()),
		clock:    acct.Clock(),
		freed:    newFreedRoom(acct.Clock()),
		held:     podindex.New(),
		reporter: holdreport.New(h.ClientSet(), pods.Lister(), h.EventRecorder(), acct.Clock()),
		pods:     pods.Lister(),
		failures: newFailureReport(ctx, acct.Client, h.ClientSet().CoreV1(), acct.Store.PodGroups(), acct.Clock()),

		unnominate: newUnnominateQueue(acct.Clock()),
	}
	g.podGroupCreated = func(group types.NamespacedName) (time.Time, bool) {
		if pg, err := acct.Store.PodGroups().PodGroups(group.Namespace).Get(group.Name); err == nil {
			return pg.CreationTimestamp.Time, true
		}
		return time.Time{}, false
	}
	if err := g.watch(pods.Informer()); err != nil {
		return nil, err
	}
	acct.Events.SharesComputed.SubscribeSignal(g.recheckHeld)
	go g.reporter.Run(ctx)
	go g.failures.run(ctx)
	go g.runUnnominate(ctx)
	return g, nil
}

// Name returns the plugin's name.
func (g *Gang) Name() string { return Name }

// podGroup returns the PodGroup of a pod, or nil for a pod without one or whose group is missing
// (QueueState holds those).
func (g *Gang) podGroup(pod *v1.Pod) *schedulingv1beta1.PodGroup {
	key := g.acct.Gangs.Key(pod)
	if key == "" {
		return nil
	}
	pg, _ := g.acct.Gangs.PodGroup(key)
	return pg
}

// PreEnqueue keeps a gang's pods out of the active queue until the group is admitted to its queue
// and has at least minMember pods, and each task's minTaskMember.
func (g *Gang) PreEnqueue(ctx context.Context, pod *v1.Pod) *fwk.Status {
	key := g.acct.Gangs.Key(pod)
	if key == "" {
		return nil
	}
	// Indexed before the group is read, so that a change after the read finds the pod.
	g.held.Add(pod, key)
	pg := g.podGroup(pod)
	if pg == nil {
		g.held.Remove(pod)
		return nil
	}
	why := g.gate(pg, key)
	if why.Message == "" {
		g.held.Remove(pod)
		g.reporter.Released(pod)
		return nil
	}
	g.reporter.Held(pod, why)
	klog.FromContext(ctx).V(5).Info("Pod waits for its gang", "pod", klog.KObj(pod), "reason", why.Message)
	return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, why.Message)
}

// gateMessage says why a group's pods may not enter the active queue, or "" when they may.
func (g *Gang) gateMessage(pg *schedulingv1beta1.PodGroup, key string) string {
	return g.gate(pg, key).Message
}

// gate is gateMessage with the reason held members report: no new node can help them.
func (g *Gang) gate(pg *schedulingv1beta1.PodGroup, key string) holdreport.Why {
	phase := pg.Status.Phase
	if (phase == "" || phase == schedulingv1beta1.PodGroupPending) && g.acct.AdmittedAtOnce(pg) {
		phase = schedulingv1beta1.PodGroupInqueue // it takes no room: in as soon as its queue takes it
	}
	switch phase {
	case "", schedulingv1beta1.PodGroupPending:
		return holdreport.Why{Reason: holdreport.PodGroupPending, Message: fmt.Sprintf("podgroup %s is Pending: its queue has not admitted it yet", key)}
	case schedulingv1beta1.PodGroupInqueue:
		if lack := g.members.count(key).liveLack(pg); lack != "" {
			return holdreport.Why{Reason: holdreport.GangIncomplete, Message: fmt.Sprintf(
				"podgroup %s has %s: waiting for the rest of the gang", key, lack)}
		}
		return g.neverWhole(pg)
	}
	// A gang that ran already takes its replacement members as they come.
	return holdreport.Why{}
}

// neverWhole holds a gang whose members, however picked, ask together for more than a capability of
// its queue or of an ancestor: it cannot run until the capability is raised.
func (g *Gang) neverWhole(pg *schedulingv1beta1.PodGroup) holdreport.Why {
	if refusal := g.acct.GangNeverFits(g.acct.Snapshot(), pg); refusal != nil {
		return holdreport.Why{Reason: holdreport.ExceedsCapability, Message: refusal.Message}
	}
	return holdreport.Why{}
}

// Less orders pods by priority, then keeps a gang's members together, ordered by their PodGroup's
// creation, so that two gangs never interleave; other pods by their own creation (policy.Ahead). The
// order of two pods never changes while they wait, however often they were tried, and it can be
// told from the objects alone: the live view numbers pending work by it.
func (g *Gang) Less(a, b fwk.QueuedEntityInfo) bool {
	pa, pb := a.GetPriority(), b.GetPriority()
	if pa != pb {
		return pa > pb
	}
	ka, ta := g.sortKey(a)
	kb, tb := g.sortKey(b)
	return policy.Ahead(policy.Place{Priority: pa, Since: ta, Namespace: ka.Namespace, Name: ka.Name},
		policy.Place{Priority: pb, Since: tb, Namespace: kb.Namespace, Name: kb.Name})
}

// sortKey is what an entity is ordered by after priority: for a gang member its group and the
// group's creation time, else the pod and its creation time. The queue's heap calls Less at every
// step: a pod without a gang costs no allocation, a gang member one lookup of its PodGroup.
func (g *Gang) sortKey(e fwk.QueuedEntityInfo) (types.NamespacedName, time.Time) {
	info, ok := e.(interface{ GetPodInfo() fwk.PodInfo })
	if !ok || info.GetPodInfo() == nil {
		return types.NamespacedName{}, e.GetTimestamp()
	}
	pod := info.GetPodInfo().GetPod()
	group, ok := g.acct.Gangs.Name(pod)
	if !ok {
		return types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}, pod.CreationTimestamp.Time
	}
	if created, ok := g.podGroupCreated(group); ok {
		return group, created
	}
	return group, pod.CreationTimestamp.Time
}
