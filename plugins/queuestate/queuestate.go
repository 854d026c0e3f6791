// Package queuestate is the scheduler plugin that enforces queue states and tenancy: the pods of a
// Suspended or Unknown queue, of a missing queue, of a PodGroup that does not exist yet, or of a
// namespace their queue does not select wait outside the active queue, each with a report saying why,
// and come back the moment that changes.
package queuestate

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/queue-scheduler/queue-scheduler/apis/config"
	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
	"github.com/queue-scheduler/queue-scheduler/pkg/accounting"
	"github.com/queue-scheduler/queue-scheduler/pkg/holdreport"
)

// Name is the plugin's name in the scheduler configuration.
const Name = "QueueState"

// What a held pod waits for, as keys of the held-pod index: a change to that thing finds its pods.
const namespacesBucket = "namespaces"

func queueBucket(queue string) string { return "queue/" + queue }

// namespaceBucket holds the pods a queue refuses for their namespace: a change of the namespace's
// labels, or of the queue's selector, may let them in.
func namespaceBucket(queue, namespace string) string { return "namespace/" + queue + "/" + namespace }

func podGroupBucket(namespace, name string) string {
	return "podgroup/" + namespace + "/" + name
}

// QueueState holds back the pods of queues that must not get new resources.
type QueueState struct {
	acct *accounting.Accounting
	*holdreport.Holder
}

var (
	_ fwk.PreEnqueuePlugin  = &QueueState{}
	_ fwk.EnqueueExtensions = &QueueState{}
)

// New builds the plugin on the scheduler's accounting, which the composition root (pkg/scheduler)
// hands it, and starts its held-pod reporter. Its args configure the embedded webhook server and
// controller, which the root starts; they are checked here too, so that a bad profile fails at start.
func New(ctx context.Context, obj runtime.Object, h fwk.Handle, acct *accounting.Accounting) (fwk.Plugin, error) {
	if _, err := config.Decode(obj, config.DefaultNamespace()); err != nil {
		return nil, err
	}
	holder, err := holdreport.NewHolder(ctx, h, acct.Clock())
	if err != nil {
		return nil, err
	}
	p := &QueueState{acct: acct, Holder: holder}
	if err := p.watch(); err != nil {
		return nil, err
	}
	go p.activateWhenNamespacesSynced(ctx)
	return p, nil
}

// Name returns the plugin's name.
func (p *QueueState) Name() string { return Name }

// PreEnqueue lets a pod into the active queue unless its queue holds it; a held pod gets a report
// saying why, written asynchronously. The pod is indexed under what it waits for before the check,
// so that a change after the check finds it.
func (p *QueueState) PreEnqueue(ctx context.Context, pod *v1.Pod) *fwk.Status {
	why := p.hold(pod)
	if why.Message == "" {
		p.Release(pod)
		return nil
	}
	p.Reporter.Held(pod, why)
	klog.FromContext(ctx).V(5).Info("Pod held by its queue", "pod", klog.KObj(pod), "reason", why.Message)
	return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, why.Message)
}

// hold indexes the pod under what can end its hold, then says why it is held, or nothing when it is
// not. Until the namespaces are known, that is the namespace cache; then the pod's PodGroup if it
// names one (a queue's change reaches the pods of its PodGroups); else the pod's queue; and, once the
// queue lets it in, its namespace, whose labels its queue selects.
func (p *QueueState) hold(pod *v1.Pod) holdreport.Why {
	if !p.acct.Store.NamespacesSynced() {
		p.Held.Add(pod, namespacesBucket)
		if !p.acct.Store.NamespacesSynced() {
			return holdreport.Why{Message: "waiting for the scheduler's namespace cache to learn the pod's queue"}
		}
	}
	group, gang := p.acct.Gangs.Name(pod)
	if gang {
		p.Held.Add(pod, podGroupBucket(group.Namespace, group.Name))
	}
	name, err := p.acct.QueueOf(pod)
	if err != nil {
		return holdreport.Why{Reason: holdreport.PodGroupMissing, Message: err.Error()}
	}
	if !gang {
		p.Held.Add(pod, queueBucket(name))
	}
	q, _ := p.acct.Store.Queue(name)
	if why := p.queueHold(name, q); why.Message != "" {
		return why
	}
	p.Held.Add(pod, namespaceBucket(name, pod.Namespace))
	if refusal := p.acct.Store.NamespaceRefusal(q, pod.Namespace); refusal != "" {
		return holdreport.Why{Reason: holdreport.NamespaceNotAllowed, Message: refusal}
	}
	return holdreport.Why{}
}

// queueHold says why the pods of queue name (nil when missing) are held, or nothing when they are not.
func (p *QueueState) queueHold(name string, q *schedulingv1beta1.Queue) holdreport.Why {
	return p.acct.Store.QueueHold(name, q)
}

// activateWhenNamespacesSynced brings back the pods held only because namespaces were not yet known.
func (p *QueueState) activateWhenNamespacesSynced(ctx context.Context) {
	if cache.WaitForCacheSync(ctx.Done(), p.acct.Store.NamespacesSynced) {
		p.Activate(namespacesBucket)
	}
}
