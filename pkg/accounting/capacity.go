package accounting

import (
	"sync"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/client-go/tools/cache"
)

// clusterCapacity sums the allocatable of the nodes that can take pods, Ready and schedulable, as
// nodes come, change and go, so that no computation of the shares lists the nodes.
type clusterCapacity struct {
	mu     sync.Mutex
	byNode map[string]v1.ResourceList
	// shapes keeps one copy of each distinct allocatable: nodes of one pool share it.
	shapes resourceShapes
	// total is replaced on a change, never changed in place, so that get need not copy it.
	total v1.ResourceList
	// changed is told when the total changed.
	changed func()
}

func newClusterCapacity(changed func()) *clusterCapacity {
	return &clusterCapacity{byNode: map[string]v1.ResourceList{}, shapes: resourceShapes{}, total: v1.ResourceList{}, changed: changed}
}

// watch follows the node informer; the returned HasSynced is true once every initial node is counted.
func (c *clusterCapacity) watch(nodes cache.SharedIndexInformer) (cache.InformerSynced, error) {
	reg, err := nodes.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.set(obj) },
		UpdateFunc: func(_, obj any) { c.set(obj) },
		DeleteFunc: func(obj any) { c.remove(obj) },
	})
	if err != nil {
		return nil, err
	}
	return reg.HasSynced, nil
}

// get returns the current total, to read only.
func (c *clusterCapacity) get() v1.ResourceList {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

func (c *clusterCapacity) set(obj any) {
	node, ok := obj.(*v1.Node)
	if !ok {
		return
	}
	var contributes v1.ResourceList
	if !node.Spec.Unschedulable && ready(node) {
		contributes = node.Status.Allocatable
	}
	c.update(node.Name, contributes)
}

func (c *clusterCapacity) remove(obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	if node, ok := obj.(*v1.Node); ok {
		c.update(node.Name, nil)
	}
}

// update replaces what node contributes; a node's status updates that leave it unchanged, such as
// heartbeats, cost nothing more.
func (c *clusterCapacity) update(node string, contributes v1.ResourceList) {
	c.mu.Lock()
	old := c.byNode[node]
	if apiequality.Semantic.DeepEqual(old, contributes) {
		c.mu.Unlock()
		return
	}
	c.total = quota.SubtractWithNonNegativeResult(c.total, old)
	if old != nil {
		c.shapes.release(old)
	}
	if len(contributes) == 0 {
		delete(c.byNode, node)
	} else {
		c.byNode[node] = c.shapes.acquire(contributes)
		c.total = quota.Add(c.total, contributes)
	}
	c.mu.Unlock()
	c.changed()
}

func ready(n *v1.Node) bool {
	for _, cond := range n.Status.Conditions {
		if cond.Type == v1.NodeReady {
			return cond.Status == v1.ConditionTrue
		}
	}
	return false
}
