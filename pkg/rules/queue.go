// Package rules holds the domain rules that involve more than one object: queue trees, submissions
// to queues, Commands. Rules about one object alone live in the CRD schemas. The admission webhook
// applies them to what is written, the accounting to what is stored (a queue's tree fault), and the
// controller to Commands that bypassed admission; the package depends on none of them. Every rule
// returns field errors with full paths, so a rejection names the object, the field and the rule.
package rules

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

// MaxDepth bounds the queue tree below the root.
const MaxDepth = 8

// Annotations a parent's cascade leaves on a child (written by the controller).
const (
	CascadedByAnnotation         = schedulingv1beta1.GroupName + "/cascaded-by"
	StateBeforeCascadeAnnotation = schedulingv1beta1.GroupName + "/state-before-cascade"
)

// View is what the rules read: the queues, the work in them and the namespaces they select. The
// scheduler's caches are one View, a snapshot read from the API server another.
type View interface {
	Queue(name string) (*schedulingv1beta1.Queue, bool)
	// QueueNames names every queue.
	QueueNames() []string
	Children(name string) []*schedulingv1beta1.Queue
	// HoldsWork reports whether the queue holds PodGroups, QueueUnits or pods.
	HoldsWork(queue string) bool
	// NamespaceRefusal says why q takes no work from namespace, or "" when it selects it.
	NamespaceRefusal(q *schedulingv1beta1.Queue, namespace string) string
}

var (
	specPath      = field.NewPath("spec")
	guaranteePath = specPath.Child("guarantee")
)

// maxGuaranteed bounds the resources a guarantee names, as the CRD bounds capability's.
const maxGuaranteed = 16

// ValidateQueue checks a created (old == nil) or updated queue against its tree: its own parent, and
// the children and descendants that a change of its capability, guarantee or place affects.
func ValidateQueue(q, old *schedulingv1beta1.Queue, view View) field.ErrorList {
	errs := validateGuarantee(q)
	errs = append(errs, metav1validation.ValidateLabelSelector(q.Spec.NamespaceSelector,
		metav1validation.LabelSelectorValidationOptions{}, specPath.Child("namespaceSelector"))...)
	moved := old == nil || old.Spec.Parent != q.Spec.Parent
	if q.Spec.Parent != "" {
		errs = append(errs, validateParent(q, old, view)...)
		if moved {
			errs = append(errs, validateStateUnderParent(q, view)...)
		}
	}
	if old != nil {
		errs = append(errs, validateStateChange(q, old, view)...)
		errs = append(errs, validateChildrenWithin(q, old, view)...)
	}
	return errs
}

// validateGuarantee checks the guarantee as written (the CRD schema cannot see the entries of its
// flat form) and keeps it within the queue's capability.
func validateGuarantee(q *schedulingv1beta1.Queue) field.ErrorList {
	errs := q.Spec.Guarantee.RejectedEntries(guaranteePath)
	if n := len(q.Spec.Guarantee.Resource) + len(errs); n > maxGuaranteed {
		errs = append(errs, field.TooMany(guaranteePath, n, maxGuaranteed))
	}
	for name, g := range q.Spec.Guarantee.Resource {
		if c, limited := q.Spec.Capability[name]; limited && g.Cmp(c) > 0 {
			errs = append(errs, field.Invalid(q.Spec.Guarantee.Path(guaranteePath, name), g.String(),
				fmt.Sprintf("must not exceed spec.capability[%s] (%s)", name, c.String())))
		}
	}
	return errs
}

// validateParent checks that the parent exists, takes no work itself, keeps the tree acyclic and
// shallow, bounds the child's capability, and has guarantee enough for all its children.
// An update that keeps a missing parent is let through (the queue reads Unknown), so that a queue that
// lost its parent can still be closed, suspended or given a new parent.
func validateParent(q, old *schedulingv1beta1.Queue, view View) field.ErrorList {
	path := specPath.Child("parent")
	parent, ok := view.Queue(q.Spec.Parent)
	if !ok {
		if old != nil && old.Spec.Parent == q.Spec.Parent {
			return nil
		}
		return field.ErrorList{field.NotFound(path, q.Spec.Parent)}
	}
	chain, cyclic := ancestry(q, view)
	if cyclic {
		return field.ErrorList{field.Invalid(path, q.Spec.Parent, "makes a cycle: "+strings.Join(chain, " -> "))}
	}
	if below := height(q.Name, view, MaxDepth); len(chain)+below > MaxDepth {
		what := "the queue"
		if below > 0 {
			what = "the deepest queue of its subtree"
		}
		return field.ErrorList{field.Invalid(path, q.Spec.Parent,
			fmt.Sprintf("puts %s %d levels below the root; at most %d are allowed", what, len(chain)+below, MaxDepth))}
	}
	var errs field.ErrorList
	if (old == nil || old.Spec.Parent != q.Spec.Parent) && view.HoldsWork(parent.Name) {
		errs = append(errs, field.Forbidden(path, fmt.Sprintf("queue %q holds work (PodGroups, QueueUnits or pods): only a queue without work can have children", parent.Name)))
	}
	errs = append(errs, validateCapabilityWithinParent(q, parent)...)
	return append(errs, validateSiblingGuarantees(q, parent, view)...)
}

// ancestry walks from q up to the root and reports the chain, and whether it comes back to q.
func ancestry(q *schedulingv1beta1.Queue, view View) ([]string, bool) {
	chain := []string{q.Name}
	for name := q.Spec.Parent; name != "" && name != schedulingv1beta1.RootQueue; {
		chain = append(chain, name)
		if name == q.Name {
			return chain, true
		}
		if len(chain) > MaxDepth+1 {
			return chain, false
		}
		p, ok := view.Queue(name)
		if !ok {
			break
		}
		name = p.Spec.Parent
	}
	return chain, false
}

// height is how many levels of queues lie below name, counted up to limit+1 (a cycle below stops
// there).
func height(name string, view View, limit int) int {
	if limit < 0 {
		return 0
	}
	deepest := 0
	for _, c := range view.Children(name) {
		deepest = max(deepest, 1+height(c.Name, view, limit-1))
	}
	return deepest
}

// validateStateUnderParent keeps a queue created under, or moved under, a Closing or Closed parent
// from taking work its parent no longer accepts: it must arrive Closed.
func validateStateUnderParent(q *schedulingv1beta1.Queue, view View) field.ErrorList {
	parent, ok := view.Queue(q.Spec.Parent)
	if !ok || parent.Spec.State != schedulingv1beta1.QueueStateClosed || q.Spec.State == schedulingv1beta1.QueueStateClosed {
		return nil
	}
	return field.ErrorList{field.Forbidden(specPath.Child("state"), fmt.Sprintf(
		"parent queue %q is %s: a queue placed under it must have spec.state Closed, not %s", parent.Name, closedOrClosing(parent), requestedState(q)))}
}

// validateChildrenWithin checks a queue's changed capability and guarantee against its children's,
// which a parent's update must not leave above its own.
func validateChildrenWithin(q, old *schedulingv1beta1.Queue, view View) field.ErrorList {
	children := view.Children(q.Name)
	var errs field.ErrorList
	for name, limit := range q.Spec.Capability {
		if was, ok := old.Spec.Capability[name]; ok && was.Cmp(limit) == 0 {
			continue
		}
		path := specPath.Child("capability").Key(string(name))
		for _, c := range children {
			if own, limited := c.Spec.Capability[name]; !limited || own.Cmp(limit) > 0 {
				have := "no limit"
				if limited {
					have = own.String()
				}
				errs = append(errs, field.Invalid(path, limit.String(), fmt.Sprintf(
					"is below child queue %q's capability (%s): lower the children's capabilities first", c.Name, have)))
			}
		}
	}
	for name, limit := range q.Spec.Guarantee.Resource {
		if was, ok := old.Spec.Guarantee.Resource[name]; ok && was.Cmp(limit) == 0 {
			continue
		}
		sum := resource.Quantity{}
		for _, c := range children {
			sum.Add(c.Spec.Guarantee.Resource[name])
		}
		if sum.Cmp(limit) > 0 {
			errs = append(errs, field.Invalid(q.Spec.Guarantee.Path(guaranteePath, name), limit.String(), fmt.Sprintf(
				"is below the sum of the children's guarantees (%s): lower the children's guarantees first", sum.String())))
		}
	}
	return errs
}

func validateCapabilityWithinParent(q, parent *schedulingv1beta1.Queue) field.ErrorList {
	var errs field.ErrorList
	for name, limit := range parent.Spec.Capability {
		path := specPath.Child("capability").Key(string(name))
		c, limited := q.Spec.Capability[name]
		switch {
		case !limited:
			errs = append(errs, field.Required(path, fmt.Sprintf("parent queue %q limits %s to %s, so the child must limit it too", parent.Name, name, limit.String())))
		case c.Cmp(limit) > 0:
			errs = append(errs, field.Invalid(path, c.String(), fmt.Sprintf("exceeds parent queue %q's capability %s", parent.Name, limit.String())))
		}
	}
	return errs
}

func validateSiblingGuarantees(q, parent *schedulingv1beta1.Queue, view View) field.ErrorList {
	var errs field.ErrorList
	for name, own := range q.Spec.Guarantee.Resource {
		limit, bounded := parent.Spec.Guarantee.Resource[name]
		if !bounded {
			continue
		}
		sum := own.DeepCopy()
		for _, sibling := range view.Children(parent.Name) {
			if sibling.Name != q.Name {
				sum.Add(sibling.Spec.Guarantee.Resource[name])
			}
		}
		if sum.Cmp(limit) > 0 {
			errs = append(errs, field.Invalid(q.Spec.Guarantee.Path(guaranteePath, name), own.String(),
				fmt.Sprintf("the guarantees of parent queue %q's children would sum to %s, above its own guarantee %s", parent.Name, sum.String(), limit.String())))
		}
	}
	return errs
}

// validateStateChange enforces the transitions of the state table.
func validateStateChange(q, old *schedulingv1beta1.Queue, view View) field.ErrorList {
	path := specPath.Child("state")
	if q.Spec.State == old.Spec.State || restoresCascade(q, old) {
		return nil
	}
	if old.Status.State == schedulingv1beta1.QueueStateClosed && q.Spec.State == schedulingv1beta1.QueueStateSuspended {
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf("queue %q is Closed: only Open leaves Closed", q.Name))}
	}
	if q.Spec.State == schedulingv1beta1.QueueStateOpen && q.Spec.Parent != "" {
		if parent, ok := view.Queue(q.Spec.Parent); ok && parent.Spec.State == schedulingv1beta1.QueueStateClosed {
			return field.ErrorList{field.Forbidden(path, fmt.Sprintf("parent queue %q is %s: a child cannot be opened until its parent is", parent.Name, closedOrClosing(parent)))}
		}
	}
	return nil
}

// restoresCascade says whether an update gives back the state a parent's cascade took: the controller
// does this when the parent reopens, and it may lead from Closed to Suspended.
func restoresCascade(q, old *schedulingv1beta1.Queue) bool {
	_, was := old.Annotations[CascadedByAnnotation]
	_, is := q.Annotations[CascadedByAnnotation]
	return was && !is && string(q.Spec.State) == old.Annotations[StateBeforeCascadeAnnotation]
}

// ValidateQueueDeletion allows deleting a queue only once it reads Closed, never the default or the
// root queue, and never a queue with children.
func ValidateQueueDeletion(q *schedulingv1beta1.Queue, view View) field.ErrorList {
	path := field.NewPath("metadata", "name")
	switch {
	case q.Name == schedulingv1beta1.DefaultQueue || q.Name == schedulingv1beta1.RootQueue:
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf("queue %q cannot be deleted", q.Name))}
	case len(view.Children(q.Name)) > 0:
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf("queue %q has child queues: delete them first", q.Name))}
	case q.Status.State != schedulingv1beta1.QueueStateClosed:
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf(
			"queue %q is %s: close it first (set spec.state to Closed, or send a CloseQueue Command) and delete it once status.state reads Closed",
			q.Name, stateName(q)))}
	}
	return nil
}

func closedOrClosing(q *schedulingv1beta1.Queue) string {
	if q.Status.State == schedulingv1beta1.QueueStateClosed {
		return "Closed"
	}
	return "Closing"
}

// requestedState is spec.state, Open when unset.
func requestedState(q *schedulingv1beta1.Queue) schedulingv1beta1.QueueState {
	if q.Spec.State == "" {
		return schedulingv1beta1.QueueStateOpen
	}
	return q.Spec.State
}

func stateName(q *schedulingv1beta1.Queue) string {
	if q.Status.State != "" {
		return string(q.Status.State)
	}
	return string(q.EffectiveState())
}
