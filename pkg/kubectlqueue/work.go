package kubectlqueue

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	schedulingv1beta1 "github.com/queue-scheduler/queue-scheduler/apis/scheduling/v1beta1"
)

// work is what a namespace, or every namespace, holds that may belong to a queue.
type work struct {
	groups []schedulingv1beta1.PodGroup
	units  []schedulingv1beta1.QueueUnit
	// pods carry the queue's label, which the admission webhook writes on every pod of
	// queue-scheduler.
	pods []v1.Pod
	jobs []batchv1.Job
	// strays are the Jobs whose pods are in no queue (refused, or waiting for their PodGroup), by
	// UID (findStrays).
	strays map[types.UID]*stray
}

// workScope says where to list a queue's work: the namespace --namespace names; else every
// namespace, or, for a user who may not list every namespace's work, the context's namespace. A
// note on the error stream says when the list was narrowed.
func (o *Options) workScope(ctx context.Context, queue string) (*work, string, error) {
	namespace, explicit, err := o.ConfigFlags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, "", err
	}
	if explicit {
		w, err := o.listWork(ctx, queue, namespace)
		return w, namespace, err
	}
	w, err := o.listWork(ctx, queue, metav1.NamespaceAll)
	if !apierrors.IsForbidden(err) {
		return w, metav1.NamespaceAll, err
	}
	w, err = o.listWork(ctx, queue, namespace)
	if apierrors.IsForbidden(err) {
		return nil, "", fmt.Errorf("you may not list the work of every namespace, nor of namespace %q (the context's): "+
			"name a namespace of yours with --namespace: %w", namespace, err)
	}
	const note = "note: listing namespace %q only: you may not list every namespace's PodGroups, QueueUnits, pods and Jobs (--namespace picks another)\n"
	if _, err := fmt.Fprintf(o.ErrOut, note, namespace); err != nil {
		return nil, "", err
	}
	return w, namespace, err
}

// listWork lists the PodGroups, QueueUnits, Jobs and the queue's pods of namespace ("" for all).
func (o *Options) listWork(ctx context.Context, queue, namespace string) (*work, error) {
	api := o.queues.SchedulingV1beta1()
	groups, err := api.PodGroups(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing PodGroups: %w", err)
	}
	units, err := api.QueueUnits(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing QueueUnits: %w", err)
	}
	selector := labels.Set{schedulingv1beta1.QueueLabel: queue}.String()
	pods, err := o.kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	jobs, err := o.kube.BatchV1().Jobs(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing Jobs: %w", err)
	}
	return &work{groups: groups.Items, units: units.Items, pods: pods.Items, jobs: jobs.Items}, nil
}

// namespaceQueues tells the queue a namespace's annotation names, and the namespace's labels, which
// queues select. It lists every namespace once where it may, else reads each namespace it is asked
// about; a namespace it may not read names no queue and has no labels.
type namespaceQueues struct {
	o     *Options
	known map[string]*v1.Namespace // nil for a namespace it may not read
}

func (o *Options) newNamespaceQueues(ctx context.Context, scope string) *namespaceQueues {
	n := &namespaceQueues{o: o, known: map[string]*v1.Namespace{}}
	if scope != metav1.NamespaceAll {
		return n
	}
	if list, err := o.kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); err == nil {
		for i := range list.Items {
			n.known[list.Items[i].Name] = &list.Items[i]
		}
	}
	return n
}

// namespace reads the named namespace, once; nil when it may not be read.
func (n *namespaceQueues) namespace(ctx context.Context, name string) *v1.Namespace {
	ns, ok := n.known[name]
	if !ok {
		if got, err := n.o.kube.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{}); err == nil {
			ns = got
		}
		n.known[name] = ns
	}
	return ns
}

// queueOf names the queue of work in namespace that names queue named (may be empty).
func (n *namespaceQueues) queueOf(ctx context.Context, namespace, named string) string {
	if named != "" {
		return named
	}
	annotation := ""
	if ns := n.namespace(ctx, namespace); ns != nil {
		annotation = ns.Annotations[schedulingv1beta1.QueueAnnotation]
	}
	return schedulingv1beta1.QueueFor("", annotation)
}

// labels are the namespace's labels; nil when it may not be read.
func (n *namespaceQueues) labels(ctx context.Context, namespace string) map[string]string {
	if ns := n.namespace(ctx, namespace); ns != nil {
		return ns.Labels
	}
	return nil
}
